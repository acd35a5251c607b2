"""Bounds on the gate's own work, checked before and right after parsing.

Parsing is linear, but sqlglot's scope walk (column qualification, table resolution) climbs from
every column to its SELECT, so a flat chain of N terms (`a OR b OR ...`, `x + x + ...`,
`SELECT ... UNION ALL SELECT ...`) costs N² steps: 5,000 ORs took 15 s of the bot's CPU. The
parser and the generator recurse once per nesting level, so deep nesting would exhaust Python's
recursion limit. Statements over a bound are refused with the bound and what to do; the
defaults are far above any real query (sql-eval's gold SQL: at most 862 bytes, 131 tree nodes,
6 levels of brackets, 3 terms in a chain).
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from agent.gate.errors import Rejection
from agent.gate.verdict import Reason

#: Longest statement, in UTF-8 bytes, checked before anything else.
MAX_BYTES = 100_000
#: Deepest nesting of brackets (round, square, curly) and CASE ... END, counted on tokens
#: before parsing; the parser recurses about 25 Python frames per level.
MAX_NESTING = 20
#: Most nodes in the parsed tree.
MAX_NODES = 10_000
#: Deepest tree, not counting the links of a chain of one operator (which sqlglot renders
#: without recursion; `a + b - c` is a chain of two, each link a level).
MAX_DEPTH = 100
#: Most terms in one chain of binary operators or set operations (`a OR b OR c` has 3).
MAX_CHAIN = 500

_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE, TokenType.CASE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE, TokenType.END})
#: Node types that form flat chains: `a AND b AND c` is And(And(a, b), c).
_CHAINS = (exp.Binary, exp.SetOperation)

#: How a chain's operator is named in a message, when its key is not the SQL word.
_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "dpipe": "||", "eq": "="}

_SIMPLIFY = "simplify it, for example by moving parts into WITH clauses, or split the question"


def check_size(text: str) -> None:
    """Refuse a text longer than `MAX_BYTES` before it is tokenized."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > MAX_BYTES:
        message = (
            f"The statement is {size:,} bytes long; the limit is {MAX_BYTES:,}. "
            "Ask for less in one query, or split the question"
        )
        raise Rejection(Reason("too_long", message), sql=text[:1000])


def check_nesting(text: str, tokens: list[Token], subject: str = "The statement") -> None:
    """Refuse brackets and CASE nested deeper than `MAX_NESTING`, before the parser recurses."""
    depth = deepest = 0
    for token in tokens:
        if token.token_type in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif token.token_type in _CLOSE:
            depth -= 1
    if deepest > MAX_NESTING:
        message = (
            f"{subject} nests brackets or CASE {deepest} levels deep; the limit is "
            f"{MAX_NESTING}. Nest less: {_SIMPLIFY}"
        )
        raise Rejection(Reason("too_deep", message), sql=text)


def too_deep_to_parse() -> Reason:
    """What a parser that ran out of recursion says (nesting the token count does not see)."""
    message = (
        "The statement is nested too deeply to check (operators such as NOT or unary minus "
        f"stacked on each other, or brackets); {_SIMPLIFY}"
    )
    return Reason("too_deep", message)


def check_tree(tree: exp.Expr, text: str) -> None:
    """Refuse a tree over `MAX_NODES`, `MAX_DEPTH` or `MAX_CHAIN`; stops at the first bound."""
    nodes = 0
    # (node, depth not counting chain links, terms so far in the chain it belongs to)
    stack: list[tuple[exp.Expr, int, int]] = [(tree, 0, 2 if isinstance(tree, _CHAINS) else 1)]
    while stack:
        node, depth, terms = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            message = (
                f"The statement has more than {MAX_NODES:,} parts (names, values, operators); "
                f"that is more than the checks take. Ask for less in one query: {_SIMPLIFY}"
            )
            raise Rejection(Reason("too_complex", message), sql=text)
        if depth > MAX_DEPTH:
            message = (
                f"The statement nests expressions more than {MAX_DEPTH} levels deep. "
                f"Nest less: {_SIMPLIFY}"
            )
            raise Rejection(Reason("too_deep", message), sql=text)
        if terms > MAX_CHAIN:
            operator = _OPERATORS.get(node.key, node.key.upper())
            message = (
                f"One chain of {operator} in the statement has more than {MAX_CHAIN} terms, "
                "more than the checks take. Use IN (...) for a list of values, or split the "
                "question into smaller queries"
            )
            raise Rejection(Reason("chain_too_long", message), sql=text)
        chain = isinstance(node, _CHAINS)
        for child in node.iter_expressions():
            if chain and type(child) is type(node):
                stack.append((child, depth, terms + 1))
            else:
                stack.append((child, depth + 1, 2 if isinstance(child, _CHAINS) else 1))
