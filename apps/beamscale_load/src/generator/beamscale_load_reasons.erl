%% @doc Why a request failed, as bounded text (pure): the key errors are counted by, per second in
%% `errors.csv' and in total in `summary.json'. Text, never atoms: reasons come from targets and
%% the network, and an atom made of each would fill the atom table of a long-lived node. Each text
%% is cut at ?MAX_CHARS and a run keeps at most ?MAX_REASONS distinct ones (the rest count as
%% `other'), so a target answering with a fresh term each time cannot grow the figures.
-module(beamscale_load_reasons).

-export([text/1, ssl_text/1, add/3, merge/2, max_reasons/0, other/0]).
-export_type([counts/0]).

%% Errors counted by reason text.
-type counts() :: #{binary() => pos_integer()}.

-define(MAX_REASONS, 100).
-define(MAX_CHARS, 120).
-define(OTHER, <<"other">>).

%% @doc The most distinct reasons a run keeps.
-spec max_reasons() -> pos_integer().
max_reasons() -> ?MAX_REASONS.

%% @doc The reason errors beyond `max_reasons/0' distinct ones are counted under.
-spec other() -> binary().
other() -> ?OTHER.

%% @doc The text of a request's failure (the `Reason' of `{error, Reason, Conn}' of
%% `beamscale_load_request:result()').
-spec text(term()) -> binary().
text(timeout) -> <<"timeout">>;
text(closed) -> <<"connection closed">>;
text({status, N}) when is_integer(N) -> <<"http status ", (integer_to_binary(N))/binary>>;
text({unset_variable, Name}) when is_binary(Name) ->
    fmt("variable ~ts unset (no value when the request was sent)", [Name]);
text({eval, R}) -> fmt("setdynvars: ~ts", [beamscale_load_eval:format_error(R)]);
text({rendezvous, Name, N, Ms}) when is_binary(Name) ->
    fmt("rendezvous ~ts: ~b users not there within ~b ms", [Name, N, Ms]);
text({no_push, Ms}) when is_integer(Ms) -> fmt("no pushed message within ~b ms", [Ms]);
text({connect, econnrefused}) -> <<"connection refused">>;
%% A request filled from variables that its kind refuses (CR LF from a reply, say): not sent.
text({bad_request, Key, Msg}) when is_atom(Key) -> fmt("request not sent: ~ts: ~ts", [Key, Msg]);
text({connect, timeout}) -> <<"connect timeout">>;
%% A process out of files: its own reason, which the closing lines name with the limit.
text({connect, emfile}) -> <<"connect: emfile (too many open files)">>;
text({connect, R}) -> fmt("connect: ~0tp", [R]);
text({rpc_error, E}) -> fmt("rpc returned {error, ~0tp}", [E]);
text({unexpected, R}) -> fmt("rpc result not as expected: ~0tp", [R]);
text({error, {erpc, noconnection}}) -> <<"node down (noconnection)">>;
text({error, {erpc, R}}) -> fmt("rpc failed: ~0tp", [R]);
%% erpc wraps an exception raised on the target; its stack is dropped: it would make every
%% error a distinct reason.
text({error, {exception, R, _Stack}}) -> fmt("exception error: ~0tp", [R]);
text({exit, {exception, R}}) -> fmt("exception exit: ~0tp", [R]);
text({exit, {signal, R}}) -> fmt("exit signal: ~0tp", [R]);
text({Class, R}) when Class =:= error; Class =:= exit; Class =:= throw ->
    fmt("exception ~ts: ~0tp", [Class, R]);
%% A TLS alert from a read: OTP's words in one line, without its source positions.
text({tls_alert, _} = Alert) -> ssl_text(Alert);
%% A request kind's own error in its words (its `format_error/1'); only a registered kind, or
%% the TLS helper and the bounded reader they share, is called: a reason naming any other
%% module is not.
text({Mod, R} = Reason) when is_atom(Mod) ->
    case Mod =:= beamscale_load_tls orelse Mod =:= beamscale_load_reader
         orelse beamscale_load_kinds:is_kind(Mod) of
        true -> fmt("~ts", [beamscale_load_kinds:format_error(Mod, R)]);
        false -> fmt("~0tp", [Reason])
    end;
%% A MySQL server's ERR packet (the mysql kind) in the server's own words.
text({mysql_error, Code, State, Msg}) when is_integer(Code) ->
    fmt("mysql error ~b (~ts): ~ts", [Code, State, Msg]);
%% A reason tagged with a kind's step name (`{pgsql, SQLSTATE, Message}'): in the kind's words.
text(R) when is_tuple(R), tuple_size(R) > 2, is_atom(element(1, R)) ->
    case beamscale_load_kinds:by_name(element(1, R)) of
        {ok, Mod} -> fmt("~ts", [beamscale_load_kinds:format_error(Mod, R)]);
        error -> fmt("~0tp", [R])
    end;
text(R) -> fmt("~0tp", [R]).

%% @doc `ssl:format_error/1''s text in one line of words: its newlines and the OTP source
%% positions it names (`In state hello at tls_record.erl:619 generated CLIENT ALERT') left out,
%% so an `errors.csv' row stays one line and one reason does not split by the line of OTP.
-spec ssl_text(term()) -> binary().
ssl_text(Reason) ->
    Text = unicode:characters_to_binary(ssl:format_error({error, Reason})),
    NoPos = re:replace(Text, "\\s+at\\s+[A-Za-z0-9_]+\\.erl:[0-9]+", "", [global, unicode]),
    OneLine = re:replace(NoPos, "\\s+", " ", [global, unicode, {return, binary}]),
    string:trim(OneLine).

%% A server's own words (a PostgreSQL or MySQL message, a kind's reason) may hold line breaks:
%% one reason is one line of `errors.csv' and of the page.
fmt(Format, Args) ->
    Text = unicode:characters_to_binary(io_lib:format(Format, Args, [{chars_limit, ?MAX_CHARS}])),
    re:replace(Text, "[\\r\\n\\t\\v\\f]+", " ", [global, unicode, {return, binary}]).

%% @doc `N' more errors of `Reason' (text), within the bound of distinct reasons.
-spec add(binary(), pos_integer(), counts()) -> counts().
add(Reason, N, Counts) when is_map_key(Reason, Counts) ->
    Counts#{Reason := maps:get(Reason, Counts) + N};
add(Reason, N, Counts) when map_size(Counts) < ?MAX_REASONS -> Counts#{Reason => N};
add(_Reason, N, Counts) -> maps:update_with(?OTHER, fun(C) -> C + N end, N, Counts).

%% @doc Two sets of counts together, within the bound (the larger counts of `B' kept first).
-spec merge(counts(), counts()) -> counts().
merge(A, B) ->
    lists:foldl(fun({R, N}, Acc) -> add(R, N, Acc) end, A,
                lists:sort(fun({_, X}, {_, Y}) -> X >= Y end, maps:to_list(B))).
