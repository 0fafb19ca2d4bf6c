"""The GitHub App: webhook server, GitHub API client, durable jobs, publishing."""
