"""A message naming thousands of joints gets a short log line, not one of 320 KB."""

from denoc_dynamics.names import name_list
from denoc_dynamics.names import repeated
from denoc_dynamics.ros.joint_commands import JointCommandReader
from denoc_dynamics.ros.joint_io import JointStateReader
from denoc_dynamics.ros.joint_io import Rejected
from denoc_dynamics.trajectory import check_trajectory
from denoc_dynamics.trajectory import TrajectoryError
from denoc_dynamics.trajectory import TrajectoryPoint
import numpy as np
import pytest
from sensor_msgs.msg import JointState

NAMES = [f'joint{k}' for k in range(1, 8)]
MANY = [f'stranger_joint_with_a_long_name_{k:05d}' for k in range(5000)]


def test_name_list_shows_a_few_then_counts():
    assert name_list(['a', 'b']) == "['a', 'b']"
    text = name_list(MANY)
    assert text.endswith('... and 4992 more]') and len(text) < 600
    assert len(name_list(['x' * 100000])) < 100
    assert repeated(['a', 'b', 'a', 'c', 'b', 'a']) == ['a', 'b']


@pytest.mark.parametrize('case', ['joint command, unknown', 'joint command, repeated',
                                  'joint state, repeated', 'trajectory, unknown',
                                  'trajectory, repeated'])
def test_5000_names_give_a_short_reason(case):
    if case.startswith('joint command'):
        names = MANY if case.endswith('unknown') else NAMES + NAMES * 700
        with pytest.raises(Rejected) as info:
            JointCommandReader(NAMES).read(JointState(name=names, position=[0.0] * len(names)))
    elif case.startswith('joint state'):
        with pytest.raises(Rejected) as info:
            JointStateReader(NAMES).selection(NAMES * 700 + MANY)
    else:
        names = MANY if case.endswith('unknown') else NAMES * 700
        with pytest.raises(TrajectoryError) as info:
            check_trajectory(NAMES, np.full(7, -3.0), np.full(7, 3.0), names,
                             [TrajectoryPoint(1.0, [0.0] * len(names))])
    assert len(info.value.detail) < 1000, len(info.value.detail)
    assert 'more' in info.value.detail or case.endswith('repeated')
