// Folders dropped on a part of the page that takes paths (Settings → Knowledge), and where the desktop window's
// dropped paths go. A browser tab gets only a dropped folder's name, never where it is. In the desktop window
// pywebview gives a drop's real paths to Python only, which hands them to `window.orkasDropped`
// (desktop/window.py) just after the page has seen the drop itself: a zone that the drop landed on claims
// those paths as it lands; every other drop's paths go to the composer (attachments), as before.

import { desktop } from "./api.js";

let claim = null; // what takes the next paths Python hands over, if a zone took the drop

// Called once, after the composer has set `window.orkasDropped`.
export function routeDrops() {
  const toComposer = window.orkasDropped;
  window.orkasDropped = (paths) => {
    const take = claim ?? toComposer;
    claim = null;
    return take?.(paths);
  };
}

const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes("Files");

// Make `zone` take dropped folders: `onPaths(paths)` in the desktop window (real paths; [] when the window had
// none to give), `onNames(names)` in a browser tab, where only the names arrive.
export function folderDropZone(zone, { onPaths, onNames }) {
  zone.addEventListener("dragover", (event) => {
    if (!hasFiles(event)) return;
    event.preventDefault();
    zone.classList.add("drop-target");
  });
  zone.addEventListener("dragleave", (event) => {
    if (!zone.contains(event.relatedTarget)) zone.classList.remove("drop-target");
  });
  zone.addEventListener("drop", (event) => {
    zone.classList.remove("drop-target");
    if (!hasFiles(event)) return;
    event.preventDefault();
    if (desktop()) {
      claim = onPaths; // the paths follow from Python; the drop goes on to pywebview's own listener
      return;
    }
    event.stopPropagation(); // not an attachment for the open chat
    onNames([...event.dataTransfer.files].map((file) => file.name));
  });
}
