"""DISCO (Chen et al., 2023): counterfactual distillation with a teacher filter."""
