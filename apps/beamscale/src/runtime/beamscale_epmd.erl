%% @doc This host's epmd, for a node made distributed at run time (`beamscale_node:distribute/0'):
%% `erl -name' starts epmd before its emulator boots, `net_kernel:start/2' does not, and
%% `epmd -daemon' returns before its daemon listens. So: start it, then wait until it answers.
-module(beamscale_epmd).

-export([ensure/1, ensure/2, port/0, answers/3, format_error/1]).

-define(LOOPBACK, {127, 0, 0, 1}).
-define(DEFAULT_PORT, 4369).
%% How long a daemon just started may take to listen. Within milliseconds on a quiet host; on CI's
%% fresh machine (the first load of `make test', beside dialyzer and a build) net_kernel's
%% registration right after `epmd -daemon' returned was refused (econnrefused).
-define(LISTEN_TIMEOUT, 5000).
-define(RETRY_MS, 50).
%% `epmd -daemon' itself forks and exits.
-define(CMD_TIMEOUT, 2000).

%% @doc An epmd answering on loopback, where this node registers, and on `Ip' (an IPv4 address
%% of this host), where the nodes of other hosts look this node up; started if none runs (an
%% epmd already running answers as it is, and `epmd -daemon' then exits at once).
-spec ensure(inet:ip4_address()) -> ok | {error, {?MODULE, term()}}.
ensure(Ip) -> ensure(Ip, port()).

%% @doc `ensure/1' with epmd on `Port'.
-spec ensure(inet:ip4_address(), inet:port_number()) -> ok | {error, {?MODULE, term()}}.
ensure(Ip, Port) ->
    Address = inet:ntoa(Ip),
    start(case Ip of ?LOOPBACK -> Address; _ -> "127.0.0.1," ++ Address end, Port),
    case answers(?LOOPBACK, Port, ?LISTEN_TIMEOUT) of
        false -> {error, {?MODULE, {no_answer, Port}}};
        %% An epmd started earlier (by another node) may listen on loopback alone: the other
        %% hosts' nodes could not find ours, which would show only as their boot timeouts.
        true -> case loopback(Ip) orelse answers(Ip, Port, ?LISTEN_TIMEOUT) of
                    true -> ok;
                    false -> {error, {?MODULE, {elsewhere, Address}}}
                end
    end.

start(Addresses, Port) ->
    case os:find_executable("epmd") of
        false -> ok;
        Epmd ->
            Args = ["-daemon", "-address", Addresses, "-port", integer_to_list(Port)],
            _ = beamscale_os:cmd(Epmd, Args, ?CMD_TIMEOUT),
            ok
    end.

%% @doc The port this emulator's epmd client uses (`erl_epmd'): `-epmd_port', which `erl' makes
%% of `ERL_EPMD_PORT' when it starts; else 4369.
-spec port() -> inet:port_number().
port() ->
    case init:get_argument(epmd_port) of
        {ok, [[P | _] | _]} ->
            case string:to_integer(P) of
                {N, ""} when N > 0, N < 65536 -> N;
                _ -> ?DEFAULT_PORT
            end;
        _ -> ?DEFAULT_PORT
    end.

%% @doc Whether something listens on `Ip':`Port' within `Ms' milliseconds, tried every 50 ms.
-spec answers(inet:ip4_address(), inet:port_number(), non_neg_integer()) -> boolean().
answers(Ip, Port, Ms) -> answers_by(Ip, Port, now_ms() + Ms).

answers_by(Ip, Port, Deadline) ->
    Left = Deadline - now_ms(),
    case gen_tcp:connect(Ip, Port, [], max(Left, 1)) of
        {ok, S} -> gen_tcp:close(S), true;
        {error, _} when Left > ?RETRY_MS ->
            timer:sleep(?RETRY_MS),
            answers_by(Ip, Port, Deadline);
        {error, _} -> false
    end.

loopback({127, _, _, _}) -> true;
loopback(_) -> false.

now_ms() -> erlang:monotonic_time(millisecond).

%% @doc One line for an error of `ensure/1'.
-spec format_error(term()) -> iodata().
format_error({no_answer, Port}) ->
    io_lib:format("epmd does not answer on 127.0.0.1:~b within ~b s (is it allowed to run "
                  "here? `epmd -daemon' starts it)", [Port, ?LISTEN_TIMEOUT div 1000]);
format_error({elsewhere, A}) ->
    ["epmd on this host does not answer on ", A, " (an epmd started earlier listens elsewhere, "
     "as ERL_EPMD_ADDRESS said): stop it (epmd -kill, once no node uses it) or start it with "
     "-address 127.0.0.1,", A].
