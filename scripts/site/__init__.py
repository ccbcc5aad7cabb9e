"""The documentation site: what the mkdocs build computes and how the built site is checked.

``hooks`` are mkdocs' hooks (``hooks:`` in mkdocs.yml): they render the ``docs/data`` files with ``tables`` and the
patch guide's facts with ``guide``, and serve the pinned diagram library that ``mermaid`` fetches;
``browser_check`` loads the built site in headless chromium and checks every diagram rendered.
"""
