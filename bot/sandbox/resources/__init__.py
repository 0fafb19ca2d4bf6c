"""The GitHub resources the sandbox emulates, one module each, mixed into :class:`bot.sandbox.state.SandboxState`."""
