"""The what-if terminal table keeps its columns apart whatever the size of the figures."""
import re

from forensics.commands.whatif import figure_table, render_whatif


def test_large_figures_stay_in_their_columns():
    rows = [("leaderless partition-seconds", 102382693.268102, 102382693.268102),
            ("leaderless partitions", 1234567, 7)]
    lines = figure_table(rows, ("baseline", "variant"))
    header, first, second = lines
    # every figure is separated from its neighbour by at least two spaces
    assert re.search(r"102,382,693\.268 {2,}102,382,693\.268$", first), first
    assert first.endswith("102,382,693.268") and second.endswith(" 7")
    # the columns line up: each right edge at the same place in every line
    assert len(header) == len(first) == len(second)
    assert header.index("baseline") + len("baseline") == first.index("268") + 3


def _doc(x, y):
    keys = ["leaderless_partition_seconds", "leaderless_partitions", "unavailable_partition_seconds",
            "unclean_elections", "possible_data_loss", "under_min_isr_partition_seconds", "leadership_skew_at_end"]
    return {"cluster": "c", "changes": [], "verdict": "v", "changed_partitions": [], "notes": [],
            "baseline": {k: x for k in keys}, "variant": {k: y for k in keys}}


def test_render_whatif_parses_back_to_its_figures():
    text = render_whatif(_doc(102382693.268102, 5.5))
    row = next(line for line in text.splitlines() if "leaderless partition-seconds" in line)
    figures = re.findall(r"[\d,]+\.\d+", row)
    assert [float(f.replace(",", "")) for f in figures] == [102382693.268, 5.5]
