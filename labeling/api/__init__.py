"""The labelling REST API (DRF): thin views over the domain functions."""
