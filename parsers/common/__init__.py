"""What every parser shares: the context it is given, the per-file accounting, reading damaged bytes as lines."""
