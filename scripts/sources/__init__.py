"""Where framework trees come from: ``pypi`` fetches verified sdists, ``base`` materializes a released base as
one tagged commit, ``checkout`` recognizes (and snapshots) a user's clone, ``cache`` builds repos atomically.
"""
