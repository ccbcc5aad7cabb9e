"""Continuous integration that fans out: the job matrix and the merge of the jobs' results (``python -m scripts.ci``).

``matrix`` turns ``nox -l --json`` and ``patches/bases`` into one GitHub Actions job per session x Python x base
(the explorer also split by seed range); ``merge`` combines the ``docs/data`` files the jobs uploaded into one set.
``.github/workflows/validate.yml`` runs both.
"""
