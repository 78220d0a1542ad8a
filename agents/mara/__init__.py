"""MARA, the cooperative multi-agent autoregressive node policy: its network, its features, and
the scheduler that plays a checkpoint (:class:`mara_env.agents.mara.agent.Mara`)."""
