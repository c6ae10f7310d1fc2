"""Touch targets a thumb can hit, and tooltips that never cover what comes next.

Measured at 390×844 with touch (issue 35 §5): Flutter's web build sizes controls for a desktop unless the
browser names a phone's system, so approval buttons were 32 px tall and the icon buttons 40×40, under the 48
a fingertip needs (Material's and Apple's guidance alike). The sizes are set here, whatever platform Flutter
guesses. A tooltip opened by a tap the browser reports as a pointer hovering (a stylus, a trackpad, a tap in
some browsers) stayed up over the composer: here tooltips open on a long press only, and still name the icon
for screen readers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import flet as ft

TARGET = 48  # px: the smallest box a finger should have to hit
LONG_PRESS_ONLY = ft.TooltipTheme(
    trigger_mode=cast(ft.TooltipTriggerMode, ft.TooltipTriggerMode.LONG_PRESS),  # Flet's constants are plain str
    wait_duration=ft.Duration(hours=24),  # a hover never waits this long: a long press still shows it at once
    prefer_below=False,
)


def theme() -> ft.Theme:
    """The view's theme (light or dark): the bundled CJK font, and tooltips on a long press only."""
    return ft.Theme(font_family="cjk", color_scheme_seed=ft.Colors.INDIGO, tooltip_theme=LONG_PRESS_ONLY)


def icon_button(
    icon: ft.IconData, label: str, on_click: Callable[[Any], Awaitable[None] | None], **rest: Any
) -> ft.IconButton:
    """An icon a thumb can hit, named by `label` (its tooltip: read by screen readers, shown on a long press)."""
    return ft.IconButton(
        icon,
        tooltip=label,
        on_click=on_click,
        size_constraints=ft.BoxConstraints(min_width=TARGET, min_height=TARGET),
        **rest,
    )


def tall(button: ft.Control) -> ft.Container:
    """A text button at least TARGET high (Flutter's desktop density drew them 32)."""
    return ft.Container(button, height=TARGET)
