"""The one exception type the tooling raises for bad input or a failed step."""


class RunguardError(Exception):
    """A failure reported to the user as a single line: ``runguard: error: <message>``."""
