"""The MARA network: a set encoder over task slots and an autoregressive per-node decoder.

* **Encoder** (once per epoch): every occupied slot's features (observed values and
  predictions, :mod:`mara_env.agents.mara.features`) become a token; a token made from the global
  features joins them; a small Transformer encoder without positional encodings mixes them, so
  the slot embeddings are permutation-equivariant in the slots. Empty slots are masked out.
* **Centralised value**: an MLP on the global token and the mean and max of the slot tokens.
* **Decoder** (once per node, in node order, parameters shared across nodes): node ``i``
  scores each slot from its embedding, the global token, how many of nodes ``0..i-1`` already
  chose that slot this epoch (one-hot, so each slot can respond to it in its own way), whether
  node ``i`` trained it last epoch, and its own index; an idle score comes from the global token
  and the node's inputs. Masked actions get ``-inf``;
  a task that reached ``max_nodes_per_task`` this epoch is masked for later nodes. Node ``i``'s
  choice therefore depends on the choices of the nodes before it (the AEC order). With
  ``autoregressive=False`` (an ablation) the counts are hidden from the decoder, so nodes decide
  independently from the same epoch observation.

Every call is batched over clusters: the same node index of a vector of environments is decoded
in one forward pass. A scheduler acting alone calls :meth:`MaraPolicy.act` instead, which takes
the actions of :meth:`MaraPolicy.encode` and :meth:`MaraPolicy.decode` for a batch of one with a
fraction of their calls (every node's logits for every count of earlier choices in one pass).

Example:
    >>> import torch
    >>> policy = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
    >>> slots, globals_ = torch.zeros(2, 3, SLOT_INPUTS), torch.zeros(2, GLOBAL_INPUTS)
    >>> slots[:, 0, 0] = 1.0  # slot 0 holds a task in both clusters
    >>> mask = torch.tensor([[True, False, False, True]] * 2)  # slot 0 or idle
    >>> previous = torch.full((2, 4), 3)  # four nodes, all idle last epoch
    >>> encoded = policy.encode(slots, globals_)
    >>> out = policy.decode(encoded, mask, previous, generator=torch.Generator().manual_seed(0))
    >>> out.actions.shape, bool(((out.actions == 0) | (out.actions == 3)).all())
    (torch.Size([2, 4]), True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, cast

import numpy as np
import torch
from torch import nn

from mara_env.agents.mara.features import GLOBAL_INPUTS, SLOT_INPUTS
from mara_env.agents.mara.sampling import (
    action_entropy,
    fast_choice,
    inverse_cdf,
    legal_actions,
    log_probabilities,
)

#: The fused kernel behind ``nn.TransformerEncoderLayer``'s inference path (``None`` in a
#: torch without it: the module then always runs as itself).
_FUSED_LAYER: Callable[..., torch.Tensor] | None = getattr(
    torch, "_transformer_encoder_layer_fwd", None
)

#: Per-slot counts of earlier nodes' choices reach the decoder one-hot, capped at this - 1.
COUNT_LEVELS = 9


@dataclass(frozen=True)
class PolicyConfig:
    """Sizes of the MARA network.

    Attributes:
        width: Embedding width of slots and of the global token.
        layers: Transformer encoder layers.
        heads: Attention heads (must divide ``width``).
        autoregressive: Whether node ``i`` sees the choices of nodes ``0..i-1``.
        slot_inputs: Per-slot input width (the feature layout's; stored for checkpoints).
        global_inputs: Global input width.
    """

    width: int = 64
    layers: int = 2
    heads: int = 4
    autoregressive: bool = True
    slot_inputs: int = SLOT_INPUTS
    global_inputs: int = GLOBAL_INPUTS

    def __post_init__(self) -> None:
        for name in ("width", "layers", "heads", "slot_inputs", "global_inputs"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"PolicyConfig.{name} must be an int >= 1, got {value!r}.")
        if self.width % self.heads:
            raise ValueError(f"PolicyConfig.heads ({self.heads}) must divide width ({self.width}).")
        if not isinstance(self.autoregressive, bool):
            raise ValueError(
                f"PolicyConfig.autoregressive must be a bool, got {self.autoregressive!r}."
            )

    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (for checkpoint cards)."""
        return asdict(self)


class Encoded(NamedTuple):
    """The encoder's output for a batch of clusters.

    Attributes:
        slot_scores: ``(batch, n_slots, width)`` per-slot part of the decoder's first layer.
        context: ``(batch, width)`` global token after the encoder.
        value: ``(batch,)`` centralised value estimate.
    """

    slot_scores: torch.Tensor
    context: torch.Tensor
    value: torch.Tensor


class Decoded(NamedTuple):
    """The decoder's output: per node, the action, its log-probability and the entropy.

    All ``(batch, n_nodes)``.
    """

    actions: torch.Tensor
    log_prob: torch.Tensor
    entropy: torch.Tensor


class MaraPolicy(nn.Module):
    """Encoder, centralised value and autoregressive decoder (see the module docstring).

    Args:
        config: The network's sizes.
    """

    def __init__(self, config: PolicyConfig | None = None) -> None:
        super().__init__()
        config = PolicyConfig() if config is None else config
        self.config = config
        width = config.width
        self.slot_in = nn.Linear(config.slot_inputs, width)
        self.global_in = nn.Linear(config.global_inputs, width)
        layer = nn.TransformerEncoderLayer(
            width,
            config.heads,
            dim_feedforward=2 * width,
            dropout=0.0,
            batch_first=True,
            norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        #: The encoder layers and their parts, whose hooks keep torch's fused path off.
        self._layer_modules = tuple(
            module for layer in self.encoder.layers for module in layer.modules()
        )
        self.norm = nn.LayerNorm(width)
        self.value_head = nn.Sequential(nn.Linear(3 * width, width), nn.Tanh(), nn.Linear(width, 1))
        self.slot_part = nn.Linear(2 * width, width)
        self.node_part = nn.Linear(COUNT_LEVELS + 3, width, bias=False)
        self.slot_out = nn.Linear(width, 1)
        self.idle_head = nn.Sequential(nn.Linear(width + 3, width), nn.Tanh(), nn.Linear(width, 1))

    def encode(self, slots: torch.Tensor, globals_: torch.Tensor) -> Encoded:
        """Encode a batch: ``slots`` ``(batch, n_slots, slot_inputs)``, ``globals_``
        ``(batch, global_inputs)``; a slot is occupied when its first feature is 1."""
        occupied = slots[..., 0] > 0.5
        padding = torch.cat((torch.zeros_like(occupied[:, :1]), ~occupied), dim=1)
        context, slot_hidden = self._hidden(slots, globals_, padding)
        weight = occupied.to(slot_hidden.dtype)[..., None]
        count = weight.sum(dim=1).clamp(min=1.0)
        mean = (slot_hidden * weight).sum(dim=1) / count
        peak = torch.where(weight > 0, slot_hidden, torch.full_like(slot_hidden, -1e4))
        peak = torch.where(occupied.any(dim=1, keepdim=True), peak.amax(dim=1), 0.0)
        value = self.value_head(torch.cat((context, mean, peak), dim=-1)).squeeze(-1)
        return Encoded(self._slot_scores(context, slot_hidden), context, value)

    def _hidden(
        self, slots: torch.Tensor, globals_: torch.Tensor, padding: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The encoder's normalised global token ``(batch, width)`` and slot tokens ``(batch,
        n_slots, width)``; ``padding`` ``(batch, 1 + n_slots)`` bool masks the empty slots (its
        first column, the global token's, is False)."""
        tokens = torch.cat(
            (
                nn.functional.linear(globals_, self.global_in.weight, self.global_in.bias)[:, None],
                nn.functional.linear(slots, self.slot_in.weight, self.slot_in.bias),
            ),
            dim=1,
        )
        norm = self.norm
        hidden = nn.functional.layer_norm(
            self._encoder(tokens, padding), norm.normalized_shape, norm.weight, norm.bias, norm.eps
        )
        return hidden[:, 0], hidden[:, 1:]

    def _encoder(self, tokens: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        """``self.encoder(tokens, src_key_padding_mask=padding)``, with less overhead where
        torch would take its fused inference path anyway.

        Where :class:`torch.nn.TransformerEncoderLayer` takes its fused path (evaluation mode,
        no gradient, an even number of heads), each layer is one call of the fused kernel it
        would call, ``torch._transformer_encoder_layer_fwd``, with the mask it would build: the
        same numbers, without the module's checks, which cost about as much as the layers'
        arithmetic on an epoch's few tokens. Anywhere else (training), the module itself runs.
        """
        layers = cast(list[nn.TransformerEncoderLayer], list(self.encoder.layers))
        fused = _FUSED_LAYER
        if fused is None or not self._fused_path(tokens):
            return cast(torch.Tensor, self.encoder(tokens, src_key_padding_mask=padding))
        mask = torch.where(padding, float("-inf"), 0.0).to(tokens.dtype)
        output = tokens
        for layer in layers:
            attention = layer.self_attn
            output = fused(
                output,
                attention.embed_dim,
                attention.num_heads,
                attention.in_proj_weight,
                attention.in_proj_bias,
                attention.out_proj.weight,
                attention.out_proj.bias,
                False,  # ReLU, not GELU
                layer.norm_first,
                layer.norm1.eps,
                layer.norm1.weight,
                layer.norm1.bias,
                layer.norm2.weight,
                layer.norm2.bias,
                layer.linear1.weight,
                layer.linear1.bias,
                layer.linear2.weight,
                layer.linear2.bias,
                mask,
                1,  # mask type: key padding
            )
        return output

    def _fused_path(self, tokens: torch.Tensor) -> bool:
        """Whether every layer would take torch's fused inference path on ``tokens`` (the
        conditions of :meth:`torch.nn.TransformerEncoderLayer.forward` that can vary here)."""
        if (
            self.training
            or self.config.heads % 2
            or tokens.device.type != "cpu"
            or not torch.backends.mha.get_fastpath_enabled()
            or torch.is_autocast_enabled()
        ):
            return False
        if torch.is_grad_enabled() and (
            tokens.requires_grad or any(p.requires_grad for p in self.encoder.parameters())
        ):
            return False
        return not any(
            module._forward_hooks or module._forward_pre_hooks for module in self._layer_modules
        )

    def _slot_scores(self, context: torch.Tensor, slot_hidden: torch.Tensor) -> torch.Tensor:
        """The per-slot part of the decoder's first layer, ``(batch, n_slots, width)``."""
        expanded = context[:, None, :].expand_as(slot_hidden)
        return cast(torch.Tensor, self.slot_part(torch.cat((slot_hidden, expanded), dim=-1)))

    def node_logits(
        self,
        encoded: Encoded,
        counts: torch.Tensor,
        previous_slot: torch.Tensor,
        node_fraction: float,
        n_nodes: int,
    ) -> torch.Tensor:
        """Unmasked logits ``(batch, n_slots + 1)`` of one node.

        Args:
            encoded: The encoder's output.
            counts: ``(batch, n_slots)`` nodes that already chose each slot this epoch.
            previous_slot: ``(batch,)`` slot the node trained last epoch (``n_slots``: idle).
            node_fraction: The node's index / ``n_nodes``.
            n_nodes: Nodes in the cluster.
        """
        terms = self._epoch_terms(
            encoded.slot_scores,
            encoded.context,
            previous_slot[:, None],
            torch.tensor([node_fraction], dtype=counts.dtype),
        )
        return self._node_logits(terms, counts, 0, n_nodes)

    def _epoch_terms(
        self,
        slot_scores: torch.Tensor,
        context: torch.Tensor,
        previous_slots: torch.Tensor,
        fractions: torch.Tensor,
    ) -> tuple[torch.Tensor, ...]:
        """The decoder's parts that do not depend on earlier nodes' choices, for every node.

        ``node_part`` is linear in its inputs (one-hot count, mine, node fraction, was idle),
        so its output is a row lookup of the count plus scaled columns; the idle head's first
        layer splits the same way. Everything except the count terms is computed here, once
        per epoch, for all nodes: ``(batch, n_nodes, n_slots, width)`` slot parts and
        ``(batch, n_nodes, width)`` idle parts.
        """
        weight = self.node_part.weight
        # Contiguous copies of the weights' columns keep the products below on dense layouts.
        mine_column, fraction_column, idle_column = weight[:, COUNT_LEVELS:].T.contiguous()
        first = cast(nn.Linear, self.idle_head[0])
        width = context.shape[-1]
        idle_context = nn.functional.linear(context, first.weight[:, :width], first.bias)
        decided_weight, fraction_weight, was_idle_weight = first.weight[:, width:].T.contiguous()
        n_slots = slot_scores.shape[1]
        mine = (torch.arange(n_slots)[None, None, :] == previous_slots[:, :, None]).to(weight.dtype)
        was_idle = (previous_slots >= n_slots).to(weight.dtype)[..., None]
        fraction = fractions[None, :, None]
        node_part = fraction * fraction_column + was_idle * idle_column
        slot_base = slot_scores[:, None] + (
            mine[..., None] * mine_column + node_part[:, :, None, :]
        )
        idle_base = (
            idle_context[:, None, :] + fraction * fraction_weight + was_idle * was_idle_weight
        )
        return slot_base, weight[:, :COUNT_LEVELS].T.contiguous(), idle_base, decided_weight

    def _node_logits(
        self, terms: tuple[torch.Tensor, ...], counts: torch.Tensor, node: int, n_nodes: int
    ) -> torch.Tensor:
        slot_base, count_rows, idle_base, decided_weight = terms
        return self._logits(
            (slot_base[:, node], count_rows, idle_base[:, node], decided_weight), counts, n_nodes
        )

    def _logits(
        self, terms: tuple[torch.Tensor, ...], counts: torch.Tensor, n_nodes: int
    ) -> torch.Tensor:
        """Unmasked logits ``(..., n_slots + 1)`` from ``terms`` of one node (slot parts
        ``(..., n_slots, width)``, idle parts ``(..., width)``) or of every node (an extra node
        axis before the slots), given ``counts`` ``(..., n_slots)`` of earlier nodes' choices."""
        slot_base, count_rows, idle_base, decided_weight = terms
        shown = counts if self.config.autoregressive else torch.zeros_like(counts)
        levels = torch.clamp(shown, max=COUNT_LEVELS - 1).long()
        hidden = torch.relu(slot_base + count_rows[levels])
        slot_logits = self.slot_out(hidden).squeeze(-1)
        decided = shown.sum(dim=-1, keepdim=True) / n_nodes
        idle_hidden = torch.tanh(idle_base + decided * decided_weight)
        idle_logit = self.idle_head[2](idle_hidden)
        return torch.cat((slot_logits, idle_logit), dim=-1)

    def _log_policy(
        self,
        terms: tuple[torch.Tensor, ...],
        counts: torch.Tensor,
        legal: torch.Tensor,
        node: int,
        n_nodes: int,
        temperature: float,
    ) -> torch.Tensor:
        """Node ``node``'s log-probabilities ``(batch, n_slots + 1)`` at ``temperature``, given
        ``counts`` ``(batch, n_slots + 1)`` of earlier nodes' choices and the ``legal`` actions."""
        logits = self._node_logits(terms, counts[:, :-1], node, n_nodes)
        return log_probabilities(logits, legal, temperature)

    def decode(
        self,
        encoded: Encoded,
        mask: torch.Tensor,
        previous_slots: torch.Tensor,
        *,
        actions: torch.Tensor | None = None,
        greedy: bool = False,
        generator: torch.Generator | None = None,
        uniforms: torch.Tensor | None = None,
        max_nodes_per_task: int | None = None,
        temperature: float = 1.0,
        with_entropy: bool = True,
    ) -> Decoded:
        """Choose every node's action, one node after another (or score given ``actions``, every
        node at once: :meth:`_score`).

        Args:
            encoded: The encoder's output for the batch.
            mask: ``(batch, n_slots + 1)`` bool legal actions at the epoch's start.
            previous_slots: ``(batch, n_nodes)`` long, each node's slot last epoch.
            actions: ``(batch, n_nodes)`` long actions to score instead of choosing (PPO,
                imitation); later nodes are conditioned on these.
            greedy: Take the most likely action instead of sampling.
            generator: Torch generator for sampling (when ``uniforms`` is not given).
            uniforms: ``(batch, n_nodes)`` uniform [0, 1) numbers, one per node: the action is
                drawn from each node's distribution by inverting its CDF at that number, so a
                cluster sampled alone or in a batch takes the same actions from the same draws.
            max_nodes_per_task: Mask a slot for later nodes once this many chose it.
            temperature: Sample from ``softmax(logits / temperature)``; below 1 sharpens the
                distribution toward (but short of) greedy. The returned log-probabilities and
                entropies are those of the distribution sampled from.
            with_entropy: Compute the entropies (training); acting skips them (zeros).
        """
        if not temperature > 0:
            raise ValueError(f"MaraPolicy.decode: temperature must be > 0, got {temperature!r}.")
        batch, n_nodes = previous_slots.shape
        fractions = torch.arange(n_nodes, dtype=encoded.slot_scores.dtype) / n_nodes
        terms = self._epoch_terms(encoded.slot_scores, encoded.context, previous_slots, fractions)
        if actions is not None:
            return self._score(terms, mask, actions, max_nodes_per_task, temperature, with_entropy)
        draws: torch.Tensor | None = None  # greedy
        if not greedy:
            draws = (
                torch.rand(batch, n_nodes, generator=generator) if uniforms is None else uniforms
            )
        counts = torch.zeros(mask.shape, dtype=encoded.slot_scores.dtype)
        rows = torch.arange(batch)
        chosen, log_probs, entropies = [], [], []
        no_entropy = torch.zeros(batch)
        ones = torch.ones(batch)
        for node in range(n_nodes):
            legal = legal_actions(mask, counts, max_nodes_per_task)
            log_p = self._log_policy(terms, counts, legal, node, n_nodes, temperature)
            probabilities = log_p.exp()
            if draws is None:
                action = log_p.argmax(dim=-1)
            else:
                action = inverse_cdf(probabilities, draws[:, node])
            entropy = action_entropy(probabilities, log_p, legal) if with_entropy else no_entropy
            chosen.append(action)
            log_probs.append(log_p[rows, action])
            entropies.append(entropy)
            counts = counts.index_put((rows, action), ones, accumulate=True)
        return Decoded(torch.stack(chosen, 1), torch.stack(log_probs, 1), torch.stack(entropies, 1))

    def _score(
        self,
        terms: tuple[torch.Tensor, ...],
        mask: torch.Tensor,
        actions: torch.Tensor,
        max_nodes_per_task: int | None,
        temperature: float,
        with_entropy: bool,
    ) -> Decoded:
        """:meth:`decode` of given ``actions``, every node at once: with the actions known, the
        counts of earlier nodes' choices that node ``i`` sees are a running sum of the actions'
        one-hots, so the per-node steps need not wait for one another (one pass over
        ``(batch, n_nodes, ...)`` tensors, and a graph as small for the gradient)."""
        n_actions = mask.shape[1]
        dtype = terms[0].dtype
        chosen = nn.functional.one_hot(actions, n_actions).to(dtype)
        earlier = chosen.cumsum(dim=1) - chosen  # (batch, n_nodes, n_slots + 1)
        legal = legal_actions(mask[:, None, :], earlier, max_nodes_per_task)
        logits = self._logits(terms, earlier[..., :-1], actions.shape[1])
        log_p = log_probabilities(logits, legal, temperature)
        log_prob = log_p.gather(-1, actions[..., None]).squeeze(-1)
        entropy = (
            action_entropy(log_p.exp(), log_p, legal)
            if with_entropy
            else torch.zeros_like(log_prob)
        )
        return Decoded(actions, log_prob, entropy)

    def act(
        self,
        slots: torch.Tensor,
        globals_: torch.Tensor,
        mask: torch.Tensor,
        previous_slots: torch.Tensor,
        *,
        uniforms: torch.Tensor | None = None,
        max_nodes_per_task: int | None = None,
        temperature: float = 1.0,
    ) -> np.ndarray:
        """Every node's action for one cluster: the actions of :meth:`encode` then
        :meth:`decode`, from the same draws, at a fraction of the cost.

        ``act(slots, globals_, mask, previous_slots, uniforms=u, ...)`` takes the actions of
        ``decode(encode(slots, globals_), mask, previous_slots, uniforms=u, ...)`` (and without
        ``uniforms`` those of ``greedy=True``). It skips the value head and the per-node torch
        calls, which cost more than their arithmetic at this size: a slot's logit depends on the
        earlier nodes only through how many chose that slot (one of :data:`COUNT_LEVELS`
        levels) and the idle logit only through how many chose any slot, so the decoder's
        outputs for every node and every such count come out of one batched pass, and each
        node's step is a lookup, a softmax and the draw in NumPy. Batched and per-node products
        can round differently in the last bits, so where a node's draw falls within
        :data:`mara_env.agents.mara.sampling.EXACT_MARGIN` of a step of its CDF (or, greedy, its two best logits are that
        close), that node's step is taken by :meth:`decode`'s own code, which decides it
        exactly as :meth:`decode` does.

        Args:
            slots: ``(1, n_slots, slot_inputs)``.
            globals_: ``(1, global_inputs)``.
            mask: ``(1, n_slots + 1)`` bool legal actions at the epoch's start.
            previous_slots: ``(1, n_nodes)`` long, each node's slot last epoch.
            uniforms: ``(1, n_nodes)`` uniform [0, 1) numbers (see :meth:`decode`); ``None``
                takes each node's most likely action.
            max_nodes_per_task: Mask a slot for later nodes once this many chose it.
            temperature: Sampling temperature (see :meth:`decode`).

        Returns:
            ``(n_nodes,)`` int64 actions.
        """
        if not temperature > 0:
            raise ValueError(f"MaraPolicy.act: temperature must be > 0, got {temperature!r}.")
        if slots.shape[0] != 1:
            raise ValueError(
                f"MaraPolicy.act decides for one cluster; got a batch of {slots.shape[0]} "
                "(use encode and decode)."
            )
        with torch.no_grad():
            return self._act(
                slots, globals_, mask, previous_slots, uniforms, max_nodes_per_task, temperature
            )

    def _act(
        self,
        slots: torch.Tensor,
        globals_: torch.Tensor,
        mask: torch.Tensor,
        previous_slots: torch.Tensor,
        uniforms: torch.Tensor | None,
        max_nodes_per_task: int | None,
        temperature: float,
    ) -> np.ndarray:
        empty = ~(slots.numpy()[0, :, 0] > 0.5)  # as encode reads occupancy
        padding = torch.from_numpy(np.concatenate(([False], empty))[None])
        context, slot_hidden = self._hidden(slots, globals_, padding)
        n_nodes = previous_slots.shape[1]
        n_slots = mask.shape[1] - 1
        dtype = slot_hidden.dtype
        fractions = torch.arange(n_nodes, dtype=dtype) / n_nodes
        terms = self._epoch_terms(
            self._slot_scores(context, slot_hidden), context, previous_slots, fractions
        )
        slot_table, idle_table = self._logit_tables(terms, n_nodes)
        legal = mask[0].tolist()
        draws = None if uniforms is None else uniforms[0].tolist()
        last_level, last_decided = len(slot_table[0][0]) - 1, len(idle_table[0]) - 1
        counts = [0] * (n_slots + 1)  # the last: idle
        decided = 0  # nodes so far that chose a slot
        chosen = []
        for node in range(n_nodes):
            rows = slot_table[node]
            logits = [rows[slot][min(counts[slot], last_level)] for slot in range(n_slots)]
            logits.append(idle_table[node][min(decided, last_decided)])
            scaled = [
                x / temperature if ok else -math.inf for x, ok in zip(logits, legal, strict=True)
            ]
            action = fast_choice(scaled, None if draws is None else draws[node])
            if action is None:  # too close to call in rounding: decode's own step decides
                log_p = self._log_policy(
                    terms,
                    torch.tensor([counts], dtype=dtype),
                    torch.tensor([legal]),
                    node,
                    n_nodes,
                    temperature,
                )
                if uniforms is None:
                    action = int(log_p.argmax(dim=-1))
                else:
                    action = int(inverse_cdf(log_p.exp(), uniforms[:, node]))
            chosen.append(action)
            counts[action] += 1
            if action < n_slots:
                decided += 1
                if max_nodes_per_task is not None and counts[action] >= max_nodes_per_task:
                    legal[action] = False
        return np.array(chosen, dtype=np.int64)

    def _logit_tables(
        self, terms: tuple[torch.Tensor, ...], n_nodes: int
    ) -> tuple[list[list[list[float]]], list[list[float]]]:
        """The decoder's logits of one cluster for every node and every state of the earlier
        nodes' choices it reads, from :meth:`_epoch_terms`' ``terms``.

        Returns:
            ``(n_nodes, n_slots, levels)`` slot logits of node ``i`` when ``level`` earlier
            nodes chose the slot, and ``(n_nodes, n_nodes)`` idle logits of node ``i`` when
            ``k`` earlier nodes chose a slot (``levels`` and ``n_nodes`` are 1 without
            autoregression, whose decoder reads no counts).
        """
        slot_base, count_rows, idle_base, decided_weight = terms
        autoregressive = self.config.autoregressive
        # No slot can have been chosen by more than the n_nodes - 1 earlier nodes.
        levels = min(COUNT_LEVELS, n_nodes) if autoregressive else 1
        hidden = torch.relu_(slot_base[0, :, :, None, :] + count_rows[:levels])
        slot_logits = self.slot_out(hidden).squeeze(-1)
        decided = torch.arange(n_nodes if autoregressive else 1, dtype=hidden.dtype) / n_nodes
        idle_hidden = torch.tanh_(idle_base[0, :, None, :] + decided[:, None] * decided_weight)
        idle_logits = self.idle_head[2](idle_hidden).squeeze(-1)
        return slot_logits.tolist(), idle_logits.tolist()
