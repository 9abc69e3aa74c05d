"""Placeholder: the parser is being written (see parse_graph)."""


class ParseError(SyntaxError):
    pass


def parse_graph(text):
    raise NotImplementedError
