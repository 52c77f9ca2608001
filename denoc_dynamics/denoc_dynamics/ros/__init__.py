"""ROS 2 nodes of denoc_dynamics."""
