"""The Textual monitor: app, screens, widgets, themes and the adapters that feed them."""
