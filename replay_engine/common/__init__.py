"""What both replays share: typed facts and their routing, the owners of partition and broker state, the judge, the timeline, configuration."""
