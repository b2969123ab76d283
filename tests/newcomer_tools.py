"""A newcomer's own 22 tools, written as plain functions the way the README's example is.

Everyday assistant tools of the kind a first agent has (home, calendar, food, music, mail),
with the docstrings people write: short, sometimes possessive ("the user's calendar").
"""

from __future__ import annotations


def get_weather(city: str, date: str = "today") -> str:
    """Get the weather forecast for a city, for today or tomorrow.

    Args:
        city: City name.
        date: The day, e.g. today or tomorrow.
    """
    return f"Mild in {city} {date}."


def set_thermostat(temperature: float, room: str = "living room") -> str:
    """Set the heating thermostat to a target temperature in degrees Celsius.

    Args:
        temperature: Target temperature.
        room: Which room's thermostat.
    """
    return f"{room} set to {temperature} C."


def get_indoor_temperature(room: str = "living room") -> str:
    """Read the current indoor temperature from a room sensor.

    Args:
        room: The room.
    """
    return f"{room}: 19 C."


def turn_on_lights(room: str, brightness: int = 100) -> str:
    """Switch the lights on in a room.

    Args:
        room: The room.
        brightness: Percent.
    """
    return f"Lights on in {room}."


def turn_off_lights(room: str) -> str:
    """Switch the lights off in a room.

    Args:
        room: The room.
    """
    return f"Lights off in {room}."


def lock_front_door() -> str:
    """Lock the front door of the house."""
    return "Locked."


def play_music(genre: str = "", artist: str = "") -> str:
    """Play music on the living room speakers by genre, artist or playlist.

    Args:
        genre: e.g. jazz, rock.
        artist: An artist name.
    """
    return f"Playing {genre or artist}."


def pause_music() -> str:
    """Pause whatever is playing on the speakers."""
    return "Paused."


def set_volume(level: int) -> str:
    """Set the speaker volume.

    Args:
        level: 0 to 100.
    """
    return f"Volume {level}."


def create_calendar_event(title: str, start: str, end: str) -> str:
    """Create a new event in the user's calendar.

    Args:
        title: Event title.
        start: Start time, ISO 8601.
        end: End time, ISO 8601.
    """
    return f"Created {title}."


def list_calendar_events(day: str) -> str:
    """List the events scheduled on a given day.

    Args:
        day: The day, ISO date.
    """
    return f"Nothing on {day}."


def delete_calendar_event(event_id: str) -> str:
    """Delete an event by its id.

    Args:
        event_id: The event's id.
    """
    return "Deleted."


def set_reminder(text: str, when: str) -> str:
    """Remind me of something at a given time.

    Args:
        text: What to remind.
        when: When, ISO 8601.
    """
    return "Reminder set."


def send_email(to: str, subject: str, body: str) -> str:
    """Send an email.

    Args:
        to: Recipient address.
        subject: Subject line.
        body: Message text.
    """
    return "Sent."


def search_email(query: str) -> str:
    """Search the mailbox for messages matching a query.

    Args:
        query: Words to look for.
    """
    return "No messages."


def order_pizza(size: str, toppings: list[str], delivery_time: str = "asap") -> str:
    """Order a pizza for delivery, now or for tomorrow.

    Args:
        size: small, medium or large.
        toppings: Toppings.
        delivery_time: When to deliver.
    """
    return "Ordered."


def find_restaurant(cuisine: str, city: str) -> str:
    """Find restaurants nearby by cuisine.

    Args:
        cuisine: e.g. Thai.
        city: City.
    """
    return "Three found."


def add_to_shopping_list(item: str) -> str:
    """Add an item to the shopping list.

    Args:
        item: The item.
    """
    return "Added."


def get_news(topic: str = "") -> str:
    """Get the latest news headlines, optionally on a topic.

    Args:
        topic: Optional topic.
    """
    return "Headlines."


def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount between currencies at today's rate.

    Args:
        amount: The amount.
        source: Currency code, e.g. EUR.
        target: Currency code, e.g. USD.
    """
    return "Converted."


def set_timer(minutes: int) -> str:
    """Start a countdown timer.

    Args:
        minutes: How long.
    """
    return "Timer started."


def translate_text(text: str, language: str) -> str:
    """Translate text into another language.

    Args:
        text: The text.
        language: Target language.
    """
    return text


TOOLS = [
    get_weather, set_thermostat, get_indoor_temperature, turn_on_lights, turn_off_lights,
    lock_front_door, play_music, pause_music, set_volume, create_calendar_event,
    list_calendar_events, delete_calendar_event, set_reminder, send_email, search_email,
    order_pizza, find_restaurant, add_to_shopping_list, get_news, convert_currency, set_timer,
    translate_text,
]  # fmt: skip
BUNDLES = {
    "home": ["set_thermostat", "get_indoor_temperature", "turn_on_lights", "turn_off_lights",
             "lock_front_door"],
    "music": ["play_music", "pause_music", "set_volume"],
    "calendar": ["create_calendar_event", "list_calendar_events", "delete_calendar_event",
                 "set_reminder"],
    "mail": ["send_email", "search_email"],
    "food": ["order_pizza", "find_restaurant", "add_to_shopping_list"],
}  # fmt: skip
