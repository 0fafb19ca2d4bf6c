"""What a pull request's history says about it: where the code it changes came from.

Pure: every module reads facts a source gathered from git (or GitHub) and returns
decisions; none runs git or touches the network.
"""
