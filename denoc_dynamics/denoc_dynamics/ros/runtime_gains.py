"""
Per-joint gain parameters that change at runtime (``ros2 param set``), ramped.

The sim node's servo gains ``servo.<joint>.kp`` / ``kd`` and the trajectory controller's
``gains.<joint>.kp`` / ``kd`` are dynamic parameters (an integer is taken as the
double it means, as ``ros2 param set /sim_node servo.joint1.kp 100`` sends it): a new
value is checked by the node's parameter table (a finite number >= 0), then by what
the node adds (the sim refuses gains its servo cannot hold stable at the physics
rate), refused with the reason in the ``SetParametersResult`` (the old gains kept),
or else applied through a :class:`~denoc_dynamics.gain_ramp.GainRamp`, without a jump
in effort.
"""

from typing import Callable, Optional, Sequence

from rclpy.parameter import Parameter

from ..gain_ramp import GainRamp


class RuntimeGains:
    """
    The gain parameters ``<prefix>.<joint>.<key>`` of a node, for ``keys``.

    :meth:`attach` (at each model load) gives the joints and the ramp; before it, a
    value is only range-checked (the model load reads it).  ``check(key, joint,
    targets)`` returns why the gains ``targets`` ({key: array}) must be refused, or
    None.
    """

    def __init__(self, node, table, prefix: str, keys: Sequence[str]):
        """Check runtime changes by the node's ParameterTable ``table``, then apply them."""
        self.node = node
        self.prefix = prefix
        self.keys = tuple(keys)
        self.joints = {}
        self.ramp: Optional[GainRamp] = None
        self.check: Callable = lambda key, joint, targets: None
        node.add_pre_set_parameters_callback(self._as_double)
        table.on_set(node, self._apply)

    def attach(self, joint_names, ramp: GainRamp, check: Optional[Callable] = None):
        """Serve the gains of ``joint_names`` (chain order) through ``ramp``."""
        self.joints = {name: i for i, name in enumerate(joint_names)}
        self.ramp = ramp
        if check is not None:
            self.check = check

    def _parse(self, name: str):
        """Return (joint, key) of a gain parameter name, else None."""
        head, _, key = name.rpartition('.')
        prefix, _, joint = head.partition('.')
        if prefix == self.prefix and key in self.keys and joint:
            return joint, key
        return None

    def _as_double(self, parameters):
        """Take an integer for a gain as the double it means (``ros2 param set ... 100``)."""
        return [Parameter(p.name, Parameter.Type.DOUBLE, float(p.value))
                if p.type_ == Parameter.Type.INTEGER and self._parse(p.name) else p
                for p in parameters]

    def _apply(self, parameters) -> Optional[str]:
        """Ramp to the gains among ``parameters`` (the table checked them); else why not."""
        changes = [(parsed, parameter.value) for parameter in parameters
                   if (parsed := self._parse(parameter.name)) is not None]
        if not changes or self.ramp is None:
            return None
        targets = {key: self.ramp.target(key) for key in self.ramp.values}
        applied = []
        for (joint, key), value in changes:
            index = self.joints.get(joint)
            if index is None:   # declared for another model: kept, not used
                continue
            targets[key][index] = value
            applied.append((key, index, value))
        for key, index, _ in applied:
            reason = self.check(key, index, targets)
            if reason:
                return f'{reason}; the gains are unchanged'
        for key, index, value in applied:
            if self.ramp.target(key)[index] != value:
                self.ramp.change(key, index, value)
        return None
