"""Dataset builders that turn staged raw public files into local copies of benchmark test sets."""
