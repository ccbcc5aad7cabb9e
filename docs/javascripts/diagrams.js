// Draws the ```mermaid blocks of a page as SVG with the mermaid bundle this site serves itself (no CDN).
mermaid.initialize({
  startOnLoad: false,
  securityLevel: "strict",
  theme: "neutral",
  sequence: { mirrorActors: false, wrap: true, width: 140, actorMargin: 40, messageFontSize: 15, noteFontSize: 14 },
});

// Texts drawn wider than the box they sit in (a note or an actor), which the reader sees cut off.
function overflowingTexts() {
  const found = [];
  for (const group of document.querySelectorAll(".runguard-diagram svg g")) {
    const boxes = [...group.children].filter((child) => child.tagName === "rect");
    if (boxes.length !== 1) continue;
    const box = boxes[0].getBBox();
    for (const text of [...group.children].filter((child) => child.tagName === "text")) {
      const drawn = text.getBBox();
      if (drawn.x < box.x - 1 || drawn.x + drawn.width > box.x + box.width + 1) found.push(text.textContent.trim());
    }
  }
  return found;
}

// What `python3 run.py -s browser` reports, kept on <body>: a diagram that does not parse is drawn as mermaid's
// error picture (data-diagram-error); a text wider than its box is cut off (data-diagram-overflow).
mermaid
  .run({ querySelector: ".runguard-diagram" })
  .then(() => {
    const overflowing = overflowingTexts();
    if (overflowing.length) document.body.dataset.diagramOverflow = overflowing.join(" | ");
  })
  .catch((error) => {
    document.body.dataset.diagramError = String(error.message || error);
  });
