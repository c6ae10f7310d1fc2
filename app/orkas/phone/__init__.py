"""The phone view: a Flet web app served by the mirror at /m/, speaking only the mirror's sync API."""
