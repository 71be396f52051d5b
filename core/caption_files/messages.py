"""Problem messages that a page can translate (pure: no Django).

A reader that may show its problems to people in other languages (the evaluation server's teams) says
each one as a :class:`Message`: a template marked with :func:`gettext_noop` (makemessages knows the name,
so the template reaches the catalogues) and its parameters, which may be messages too (a position inside
a problem). ``str()`` gives the English text; :meth:`Message.render` gives it through a translation
function, where it is shown."""

from __future__ import annotations

from collections.abc import Callable


def gettext_noop(message: str) -> str:
    """Marks a text for the message catalogues without importing Django; the page that shows it
    translates it there."""
    return message


class Message:
    """A template with ``%(name)s`` parameters; numbers are given formatted (``f"{n:,}"``)."""

    __slots__ = ("params", "template")

    def __init__(self, template: str, **params: object):
        self.template = template
        self.params = params

    def render(self, gettext: Callable[[str], str]) -> str:
        text = gettext(self.template)
        if not self.params:
            return text
        return text % {k: v.render(gettext) if isinstance(v, Message) else v for k, v in self.params.items()}

    def __str__(self) -> str:
        return self.render(lambda template: template)

    def __repr__(self) -> str:
        return f"Message({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == (str(other) if isinstance(other, Message | str) else other)

    def __hash__(self) -> int:
        return hash(str(self))


Text = str | Message


def plain(text: str) -> Message:
    """A text that is not translated (a file's name, a parser's reason) as a message."""
    return Message("%(text)s", text=text)


def located(where: Text, message: Text) -> Message:
    """``where: message``, or the message alone where there is no position."""
    if not where:
        return message if isinstance(message, Message) else plain(message)
    return Message(gettext_noop("%(where)s: %(message)s"), where=where, message=message)


class Joined(Message):
    """Texts joined by ", ", each translated: a list inside a message."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[Text]):
        super().__init__("")
        self.parts = parts

    def render(self, gettext: Callable[[str], str]) -> str:
        return ", ".join(part.render(gettext) if isinstance(part, Message) else part for part in self.parts)
