"""Rendering: a classified pull request -> the guide's Markdown, in English or Chinese."""
