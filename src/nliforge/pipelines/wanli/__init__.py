"""WANLI (Liu et al., 2022): worker-and-AI collaboration."""
