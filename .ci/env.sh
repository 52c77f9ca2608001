#!/usr/bin/env bash
# Run a command in the project's ROS 2 environment (PyPI wheels + colcon install/).
#
#   .ci/env.sh COMMAND [ARGS...]
#
# Used by the Makefile's test/run/bench targets; usable by hand too, e.g.
#   .ci/env.sh python -c 'import denoc_dynamics_interfaces.msg'
#   .ci/env.sh install/denoc_dynamics/lib/denoc_dynamics/denoc_sim_arm
#
# Inputs (environment, all optional):
#   VENV           the virtualenv holding the ROS wheels   (default: <repo>/.venv)
#   INSTALL_DIR    the colcon install space                (default: <repo>/install),
#                  or 'source': none, the package from the source tree on PYTHONPATH
#                  (make numba-oldest, whose venv has the ROS wheels but no build)
# ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE are left as the caller has them:
# `make run` must be visible from a second terminal on the default domain.  The tests
# isolate themselves (test/ros_helpers.py: a domain_coordinator domain, localhost).
# It does not use `set -u`: colcon's setup scripts read unset variables.
set -eo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$(cd "${VENV:-$ROOT/.venv}" && pwd)"
if [ "$INSTALL_DIR" != source ]; then
  INSTALL_DIR="$(cd "${INSTALL_DIR:-$ROOT/install}" && pwd)"
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "env.sh: no virtualenv at $VENV (run 'make venv')" >&2
  exit 2
fi
if [ "$INSTALL_DIR" != source ] && [ ! -f "$INSTALL_DIR/setup.sh" ]; then
  echo "env.sh: no colcon install space at $INSTALL_DIR (run 'make build')" >&2
  exit 2
fi

# 1. The virtualenv (PATH, VIRTUAL_ENV).
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"
unset PYTHONHOME

# 2. The wheels' shared libraries. The ros-wheels-bootstrapper .pth would add
#    them by re-executing every Python process; doing it here once (and setting
#    its guard variable) gives a deterministic order, drops paths of any other
#    venv inherited from the caller, and spares the re-exec.
pyver="$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
ld="$VENV/lib"
for d in "$VENV/lib/python$pyver/site-packages"/ros_*.libs; do
  [ -d "$d" ] && ld="$ld:$d"
done
export LD_LIBRARY_PATH="$ld"
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

# 3. The ament prefix of the wheels (share/ament_index lives in the venv), then
#    the colcon install space on top (adds install/* to AMENT_PREFIX_PATH,
#    PYTHONPATH, LD_LIBRARY_PATH, PATH).
export AMENT_PREFIX_PATH="$VENV"
export CMAKE_PREFIX_PATH="$VENV"
unset PYTHONPATH COLCON_PREFIX_PATH
if [ "$INSTALL_DIR" = source ]; then
  export PYTHONPATH="$ROOT/denoc_dynamics"
else
  COLCON_CURRENT_PREFIX="$INSTALL_DIR" . "$INSTALL_DIR/setup.sh"
  unset COLCON_CURRENT_PREFIX
  export PATH="$INSTALL_DIR/denoc_dynamics/lib/denoc_dynamics:$PATH"  # the console scripts
fi

# 4. Runtime settings for ROS 2 and numerics.
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export OPENBLAS_NUM_THREADS=1
export PYTHONUNBUFFERED=1

exec "$@"
