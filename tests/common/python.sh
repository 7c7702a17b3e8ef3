# python.sh - sourced by the test scripts: PY, the Python interpreter
# itself, found once (a version manager's shim, such as pyenv's, costs
# 0.4 s a call: most of a property-test seed's time).
PY=$(python3 -c 'import sys; print(sys.executable)')
