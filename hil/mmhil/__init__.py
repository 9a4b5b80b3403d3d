"""mmhil: benches and the Python Rig API. Not built yet: the virtual bench issue builds it."""
