"""The citation tree under a reflection: what an insight rests on, down to observations."""

from __future__ import annotations

from dataclasses import dataclass, field

from memstream.stream import Memory, MemoryStream


@dataclass
class CitationNode:
    memory: Memory
    children: list[CitationNode] = field(default_factory=list)

    def lines(self, indent: int = 0) -> list[str]:
        m = self.memory
        out = [f"{'  ' * indent}[{m.id}] {m.kind} (importance {m.importance}): {m.text}"]
        for child in self.children:
            out.extend(child.lines(indent + 1))
        return out


def citation_tree(stream: MemoryStream, owner: str, memory_id: int) -> CitationNode:
    """The tree of memories cited, transitively, by ``memory_id`` (each memory once per path)."""

    def build(mid: int, path: frozenset[int]) -> CitationNode:
        memory = stream.get(owner, mid)
        node = CitationNode(memory)
        for cited in memory.cites:
            if cited not in path and cited not in stream.store.damaged:  # a damaged row is skipped (warned on open)
                node.children.append(build(cited, path | {cited}))
        return node

    return build(memory_id, frozenset({memory_id}))
