"""Where framework trees come from: sdists, released bases, user checkouts, and the cache that keeps them.

``pypi`` fetches verified sdists, ``base`` materializes a released base as one tagged commit, ``checkout``
recognizes (and snapshots) a user's clone, ``cache`` builds repos atomically and reuses them while intact;
``pythons`` finds the interpreters to run them on (every CPython 3.10+ on the machine).
"""
