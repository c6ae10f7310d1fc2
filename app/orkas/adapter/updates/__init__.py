"""Updates: the signed release feed, downloads checked before use, a new version put in place."""
