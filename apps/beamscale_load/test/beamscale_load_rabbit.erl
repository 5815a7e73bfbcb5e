%% Test helper (not a suite): Debian's rabbitmq-server started as a node of its own for a suite:
%% its own node name, AMQP port and distribution port on 127.0.0.1, its database, logs,
%% configuration, plugins file and Erlang cookie (HOME) in a directory under priv_dir; stopped by
%% its OS pid. epmd is shared with whatever runs on the machine and left alone.
-module(beamscale_load_rabbit).

-include_lib("common_test/include/ct.hrl").

-export([start/3]).

-define(SERVER, "/usr/lib/rabbitmq/bin/rabbitmq-server").
%% RabbitMQ boots in 7 s on this 2-core machine under load 10, in 54 s under load 27.
-define(START_MS, 120000).
%% A clean stop takes about 1 s.
-define(STOP_MS, 15000).

%% @doc A broker in priv_dir/`Name' with the plugins `Plugins' (atoms, `rabbitmq_mqtt'...):
%% `#{amqp => Port, Plugin => Port, stop => Fun}'. Fails the test if it does not start.
start(Config, Name, Plugins) ->
    Dir = beamscale_load_servers:tmp_dir(Config, Name),
    [ok = filelib:ensure_path(filename:join(Dir, D)) || D <- ["home", "mnesia", "log"]],
    Port = beamscale_load_servers:free_port(),
    PluginPorts = [{P, beamscale_load_servers:free_port()} || P <- Plugins],
    ok = file:write_file(filename:join(Dir, "enabled_plugins"),
                         io_lib:format("~p.~n", [Plugins])),
    ok = file:write_file(filename:join(Dir, "rabbitmq.conf"),
                         [io_lib:format("listeners.tcp.default = 127.0.0.1:~b~n", [Port])
                          | [plugin_conf(P, N) || {P, N} <- PluginPorts]]),
    Node = lists:flatten(io_lib:format("~ts_~b@localhost",
                                       [Name, erlang:unique_integer([positive])])),
    PidFile = filename:join(Dir, "rabbit.pid"),
    Env = [{"HOME", filename:join(Dir, "home")},
           {"RABBITMQ_NODENAME", Node},
           {"RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1"},
           {"RABBITMQ_NODE_PORT", integer_to_list(Port)},
           {"RABBITMQ_DIST_PORT", integer_to_list(beamscale_load_servers:free_port())},
           {"RABBITMQ_MNESIA_BASE", filename:join(Dir, "mnesia")},
           {"RABBITMQ_LOG_BASE", filename:join(Dir, "log")},
           {"RABBITMQ_CONFIG_FILE", filename:join(Dir, "rabbitmq")},
           {"RABBITMQ_ENABLED_PLUGINS_FILE", filename:join(Dir, "enabled_plugins")},
           {"RABBITMQ_PID_FILE", PidFile},
           {"RABBITMQ_CONF_ENV_FILE", "/dev/null"},
           %% The test node's own flags (ERL_AFLAGS) are not the broker's.
           {"ERL_AFLAGS", false}],
    Start = erlang:monotonic_time(millisecond),
    Stop = beamscale_load_servers:start_server(?SERVER, [], Port, Dir, Env, ?START_MS),
    ct:pal("rabbitmq ~ts listening on ~b after ~b ms",
           [Node, Port, erlang:monotonic_time(millisecond) - Start]),
    maps:from_list([{amqp, Port}, {stop, fun() -> stop(Stop, PidFile) end} | PluginPorts]).

plugin_conf(rabbitmq_mqtt, Port) -> io_lib:format("mqtt.listeners.tcp.default = 127.0.0.1:~b~n"
                                                  "mqtt.allow_anonymous = true~n", [Port]).

%% The script (the port's OS process) stops the broker on SIGTERM and waits for it; the
%% broker's own pid is waited for here, and killed if it outlasts ?STOP_MS.
stop(Stop, PidFile) ->
    Pid = case file:read_file(PidFile) of
              {ok, B} -> string:trim(binary_to_list(B));
              {error, _} -> none
          end,
    ok = Stop(),
    wait_gone(Pid, erlang:monotonic_time(millisecond) + ?STOP_MS).

wait_gone(none, _Deadline) -> ok;
wait_gone(Pid, Deadline) ->
    case os:cmd("kill -0 " ++ Pid ++ " 2>/dev/null && echo alive") of
        "alive" ++ _ ->
            case erlang:monotonic_time(millisecond) > Deadline of
                true -> os:cmd("kill -9 " ++ Pid), ok;
                false -> timer:sleep(100), wait_gone(Pid, Deadline)
            end;
        _ -> ok
    end.
