// Draws the ```mermaid blocks of a page as SVG with the mermaid bundle this site serves itself (no CDN).
mermaid.initialize({
  startOnLoad: false,
  securityLevel: "strict",
  theme: "neutral",
  sequence: { mirrorActors: false, wrap: true, width: 140, actorMargin: 40, messageFontSize: 15, noteFontSize: 14 },
});
// A diagram that does not parse is drawn as mermaid's error picture; its message is kept on <body> for
// `python3 run.py -s browser`, which reports it.
mermaid.run({ querySelector: ".runguard-diagram" }).catch((error) => {
  document.body.dataset.diagramError = String(error.message || error);
});
