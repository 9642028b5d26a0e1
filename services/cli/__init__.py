"""The `arena` command line: local matches, the replay viewer and thin calls to the REST API."""
