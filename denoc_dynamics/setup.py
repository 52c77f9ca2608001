"""ament_python package: the DeNOC dynamics core and its ROS 2 nodes."""
from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'denoc_dynamics'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'),
         glob('config/*.yaml') + glob('config/*.rviz')),
        (os.path.join('share', package_name, 'urdf'), glob('urdf/*.urdf')),
    ],
    # What the modules import at their top; the ROS packages (rclpy, the messages,
    # launch) come from package.xml through rosdep, or from the ROS wheels on PyPI.
    install_requires=['setuptools', 'numpy', 'numba', 'lxml'],
    # Optional features, imported only where used: the browser view (arm_viewer),
    # denoc_sim_arm's plot, the URDFs of example-robot-data.
    extras_require={'test': ['pytest', 'hypothesis', 'scipy', 'PyYAML', 'pin',
                             'example-robot-data', 'playwright'],
                    'viewer': ['viser', 'yourdfpy', 'trimesh', 'pycollada'],
                    'plot': ['matplotlib'],
                    'examples': ['example-robot-data']},
    zip_safe=True,
    maintainer='denoc_dynamics developers',
    maintainer_email='dev@denoc.invalid',
    description='Robot dynamics by the Decoupled Natural Orthogonal Complement (DeNOC), '
                'with ROS 2 dynamics and simulation nodes.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'denoc-dynamics = denoc_dynamics.cli:main',
            'dynamics_node = denoc_dynamics.ros.dynamics_node:main',
            'sim_node = denoc_dynamics.ros.sim_node:main',
            'denoc_sim_arm = denoc_dynamics.ros.sim_arm_main:main',
            'trajectory_controller = denoc_dynamics.ros.trajectory_controller:main',
            'gripper_controller = denoc_dynamics.ros.gripper_controller:main',
            'send_trajectory = denoc_dynamics.ros.send_trajectory:main',
            'arm_viewer = denoc_dynamics.ros.arm_viewer:main',
        ],
    },
)
