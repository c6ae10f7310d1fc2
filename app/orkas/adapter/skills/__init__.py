"""Skills from every root: found, judged, indexed, watched, and the person's own."""
