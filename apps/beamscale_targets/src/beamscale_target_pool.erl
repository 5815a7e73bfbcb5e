%% @doc A small connection pool for the IO-bound targets, shaped like the thesis's Emysql
%% connection manager: `Size' workers each own one connection, a caller's job goes to a free
%% worker or waits in a queue. Workers connect lazily and again after their connection died, so
%% the pool starts and answers while the database is down: a job then returns a connection
%% error. Every job carries a deadline: a caller gets an answer within its timeout, and a job
%% whose caller has given up is dropped, not run late.
%%
%% Written here rather than taking Debian's poolboy: poolboy starts its workers (our
%% connections) when the pool starts and crashes when they cannot connect, while a load run
%% must get errors, not a dead pool, when the database is down.
-module(beamscale_target_pool).
-behaviour(gen_server).

-export([start/3, stop/1, run/3, format_error/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).
-export_type([connector/0, job/0]).

%% How a worker opens and closes its connection; both get the milliseconds left.
-type connector() :: #{connect := fun((timeout()) -> {ok, pid()} | {error, term()}),
                       close := fun((pid()) -> ok)}.
%% A job gets the connection and the milliseconds left before the caller's deadline.
-type job() :: fun((pid(), non_neg_integer()) -> term()).

-define(STOP_TIMEOUT, 5000).

%% @doc Start pool `Name' (registered locally, linked to nobody: it outlives its caller, which
%% on a node under test is a short-lived rpc process) with `Size' workers.
-spec start(atom(), pos_integer(), connector()) -> {ok, pid()} | {error, term()}.
start(Name, Size, Connector) ->
    gen_server:start({local, Name}, ?MODULE, {Size, Connector}, []).

%% @doc Stop the pool; its workers close their connections.
-spec stop(atom()) -> ok.
stop(Name) ->
    try gen_server:stop(Name, normal, ?STOP_TIMEOUT)
    catch exit:noproc -> ok
    end.

%% @doc Run `Job' on a pooled connection; its result, or an error within `Timeout' ms.
-spec run(atom(), job(), pos_integer()) -> term() | {error, {?MODULE, term()}}.
run(Name, Job, Timeout) ->
    Deadline = erlang:monotonic_time(millisecond) + Timeout,
    try gen_server:call(Name, {run, Job, Deadline}, Timeout)
    catch
        exit:{timeout, _} -> {error, {?MODULE, {timeout, Timeout}}};
        exit:{noproc, _} -> {error, {?MODULE, {not_started, Name}}}
    end.

%% @doc One line for an error of this module.
-spec format_error(term()) -> iodata().
format_error({timeout, Ms}) -> io_lib:format("no answer within ~b ms", [Ms]);
format_error({not_started, Name}) -> io_lib:format("pool ~s is not started", [Name]);
format_error({connect, Why}) -> io_lib:format("cannot connect: ~0tp", [Why]);
format_error({crash, Why}) -> io_lib:format("job crashed: ~0tp", [Why]).

%%% The pool

-record(pool, {connector :: connector(), free = [] :: [pid()], queue = queue:new()}).

%% @private
-spec init({pos_integer(), connector()}) -> {ok, #pool{}}.
init({Size, Connector}) ->
    process_flag(trap_exit, true),
    {ok, #pool{connector = Connector,
               free = [spawn_worker(Connector) || _ <- lists:seq(1, Size)]}}.

%% @private
-spec handle_call({run, job(), integer()}, gen_server:from(), #pool{}) ->
          {noreply, #pool{}}.
handle_call({run, Job, Deadline}, From, #pool{free = [W | Ws]} = P) ->
    W ! {job, From, Job, Deadline},
    {noreply, P#pool{free = Ws}};
handle_call({run, Job, Deadline}, From, #pool{free = [], queue = Q} = P) ->
    {noreply, P#pool{queue = queue:in({From, Job, Deadline}, Q)}}.

%% @private
-spec handle_cast(term(), #pool{}) -> {noreply, #pool{}}.
handle_cast(_Msg, P) -> {noreply, P}.

%% @private
-spec handle_info(term(), #pool{}) -> {noreply, #pool{}}.
handle_info({free, W}, P) -> {noreply, dispatch(W, P)};
handle_info({'EXIT', _W, _Why}, #pool{connector = C} = P) ->
    %% A worker died (a job crashed it): a fresh one takes its place.
    {noreply, dispatch(spawn_worker(C), P)};
handle_info(_Msg, P) -> {noreply, P}.

%% @private
-spec terminate(term(), #pool{}) -> ok.
terminate(_Why, _P) -> ok.

dispatch(W, #pool{free = Free, queue = Q} = P) ->
    case queue:out(Q) of
        {{value, {From, Job, Deadline}}, Q1} ->
            W ! {job, From, Job, Deadline},
            P#pool{queue = Q1};
        {empty, _} -> P#pool{free = [W | Free]}
    end.

%%% A worker: owns at most one connection

spawn_worker(Connector) ->
    Pool = self(),
    spawn_link(fun() -> process_flag(trap_exit, true), worker(Pool, Connector, none) end).

worker(Pool, #{close := Close} = C, Conn) ->
    receive
        {job, From, Job, Deadline} ->
            Conn1 = job(From, Job, Deadline, C, alive(Conn)),
            Pool ! {free, self()},
            worker(Pool, C, Conn1);
        {'EXIT', Pool, _} ->
            _ = alive(Conn) =/= none andalso Close(Conn),
            exit(normal);
        _Stale ->
            worker(Pool, C, Conn)
    end.

job(From, Job, Deadline, #{connect := Connect}, Conn) ->
    case erlang:monotonic_time(millisecond) of
        Now when Now >= Deadline -> Conn;
        Now ->
            case connected(Conn, Connect, Deadline - Now) of
                {ok, C} ->
                    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
                    gen_server:reply(From, try Job(C, Left)
                                           catch _:Why -> {error, {?MODULE, {crash, Why}}}
                                           end),
                    C;
                {error, Why} ->
                    gen_server:reply(From, {error, {?MODULE, {connect, Why}}}),
                    none
            end
    end.

connected(none, Connect, Left) -> Connect(Left);
connected(Conn, _Connect, _Left) -> {ok, Conn}.

alive(none) -> none;
alive(Conn) ->
    case is_process_alive(Conn) of
        true -> Conn;
        false -> none
    end.
