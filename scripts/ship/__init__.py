"""Shipping the series: a patched wheel to use today, PR material to send upstream.

``wheel`` builds the patched wheel and its manifest; ``export`` writes PR material with ``prbody`` (upstream's PR
template), ``checklist`` and its ``evidence``, ``issues`` (issue drafts in upstream's bug template) and
``rangediff`` against the last export.
"""
