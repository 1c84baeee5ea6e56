"""Everything nliforge sends to Weights & Biases beyond Lightning's scalars, in one place: training,
evaluation and report runs (`runs`) and generation runs (`generation`). Entry points make one call each
and the rest of nliforge stays W&B-free."""
