"""Several clusters in one folder, told apart by what the evidence says of itself."""
