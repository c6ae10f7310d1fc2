"""A small window that starts a real XDND drag of one file when pressed: the other side of the
desktop drop test (run as its own process on the Xvfb display)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QDrag
from PySide6.QtWidgets import QApplication, QLabel


class Source(QLabel):
    def __init__(self, path: str) -> None:
        super().__init__("drag me")
        self.path = path
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setGeometry(0, 0, 200, 100)

    def mousePressEvent(self, event: object) -> None:
        data = QMimeData()
        data.setUrls([QUrl.fromLocalFile(self.path)])
        drag = QDrag(self)
        drag.setMimeData(data)
        drag.exec(Qt.DropAction.CopyAction)


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    source = Source(sys.argv[1])
    source.move(0, 0)
    source.show()
    print("ready", flush=True)
    sys.exit(app.exec())
