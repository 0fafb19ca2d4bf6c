"""What a repository's earlier merged pull requests say about a new one (pure: no I/O)."""
