"""What a repository's earlier merged pull requests say about a new one: where the code it
changes came from (``lines``, ``links``) and which files usually change together
(``coupling``).

Pure: every module reads facts a source gathered from git (or GitHub, or the stored
guides) and returns decisions; none runs git or touches the network.
"""
