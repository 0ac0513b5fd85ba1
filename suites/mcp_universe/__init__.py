"""MCP-Universe (Luo et al., 2025, arXiv 2508.14704): tasks judged by executable evaluators
on the final answer, over local MCP servers. (Work in progress: the suite object comes with
the agents.)"""
