"""The original's desktop tools, which oi does not drive (it runs code; it does not see the
screen or work the mouse, keyboard or desktop apps): each method raises a clear error."""

NOT_HEADLESS = (
    "not available in oi: headless (oi runs code; it does not drive the screen, mouse, "
    "keyboard or desktop apps)"
)

# The original's tools and their public methods (0.4.3), refused in oi.
TOOLS = {
    "mouse": ("scroll", "position", "move", "click", "double_click", "triple_click", "right_click", "down", "up"),
    "keyboard": ("write", "press", "press_and_release", "hotkey", "down", "up"),
    "display": ("width", "height", "size", "center", "info", "view", "screenshot", "find", "find_text", "get_text_as_list_of_lists"),
    "clipboard": ("view", "copy", "paste"),
    "mail": ("get", "send", "unread_count", "calculate_upload_delay", "format_path_for_applescript"),
    "sms": ("resolve_database_path", "send", "get", "can_access_database", "prompt_full_disk_access"),
    "calendar": ("get_events", "create_event", "delete_event", "get_first_calendar"),
    "contacts": ("get_phone_number", "get_email_address", "get_full_names_from_first_name"),
    "browser": ("search", "fast_search", "setup", "go_to_url", "search_google", "analyze_page", "quit"),
    "vision": ("load", "ocr", "query"),
    "docs": ("search",),
}


def _refusal(tool, method):
    def refused(self, *args, **kwargs):
        raise NotImplementedError(f"computer.{tool}.{method} is {NOT_HEADLESS}")

    refused.__name__ = method
    refused.__doc__ = "Not available in oi (headless)."
    return refused


def _tool_class(tool, methods):
    def __init__(self, computer):
        self.computer = computer

    body = {"__init__": __init__, "__doc__": f"computer.{tool}: {NOT_HEADLESS}."}
    body.update({m: _refusal(tool, m) for m in methods})
    return type(tool.capitalize(), (), body)


CLASSES = {tool: _tool_class(tool, methods) for tool, methods in TOOLS.items()}
