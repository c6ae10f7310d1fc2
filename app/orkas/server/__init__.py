"""The local HTTP/WebSocket API that the desktop window, a browser and (later) the phone mirror share."""
