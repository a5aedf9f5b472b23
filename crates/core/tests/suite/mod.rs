mod agent_loop;
