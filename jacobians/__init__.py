"""The planner: dense and sparse Jacobians and Hessians, mode choice (grows in a later issue)."""
